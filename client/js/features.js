// Protocol extensions the client can use but the server does not take yet (issue 4: clocks,
// showing the bot's analysis to players, handing a seat to a bot). Their controls stay hidden
// until the server handles them, so no button leads to an error the user cannot fix.
export const SERVER_FEATURES = { clocks: false, showAnalysisOption: false, handToBot: false };
