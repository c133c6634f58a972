// Additive protocol extensions (clocks, showing the bot's analysis to players, handing a seat
// to a bot). A server without one of them answers with an error: switch its control off here
// rather than show a button that cannot work.
export const SERVER_FEATURES = { clocks: true, showAnalysisOption: true, handToBot: true };
