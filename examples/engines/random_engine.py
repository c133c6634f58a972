#!/usr/bin/env python3
"""A minimal engine for `tablas bot` (docs/bots.md): it plays a random legal move.

It speaks the engine protocol (contract section 12): lines on stdin, answers on stdout.

    > tablas 1                    < ready
    > game GAME SEAT OPTIONS_JSON
    > position POSITION
    > state STATE_JSON
    > legal N                     (then N lines: the legal moves, as `tablas moves` writes them)
    > go TIME_MS                  < move MOVE
    > result WIN|LOSS|DRAW REASON
    > quit

Run it with:  tablas bot --server ws://127.0.0.1:8765/ws --name MyBot --password SECRET... \
                  --engine "python3 examples/engines/random_engine.py" --games tictactoe
Replace choose() with your search: POSITION is the game's notation (tic-tac-toe: 9 cells of
X, O or .), STATE_JSON the room's state (backgammon's dice and cube), and the move you answer
must be one of the N lines, written exactly as given.
"""

import random
import sys


def choose(game: str, position: str, legal: list[str]) -> str:
    return random.choice(legal)


def main() -> None:
    game, position, legal = "", "", []
    for raw in sys.stdin:  # one line at a time, as the adapter writes them
        words = raw.rstrip("\n").split(" ", 1)
        command, rest = words[0], words[1] if len(words) > 1 else ""
        if command == "tablas":
            print("ready", flush=True)
        elif command == "game":
            game = rest.split(" ")[0]
        elif command == "position":
            position = rest
        elif command == "legal":
            legal = [sys.stdin.readline().rstrip("\n") for _ in range(int(rest))]
        elif command == "go":
            print("move " + choose(game, position, legal), flush=True)
        elif command == "quit":
            return
        # "state" and "result" are not needed to play at random


if __name__ == "__main__":
    main()
