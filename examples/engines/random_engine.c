/* A minimal engine for `tablas bot` in C (docs/bots.md): it plays a random legal move.
 *
 * The engine protocol (contract section 12) is lines of text: the adapter writes commands
 * on stdin, the engine answers `ready` to `tablas 1` and `move MOVE` to `go TIME_MS`, MOVE
 * being one of the lines that followed `legal N`, written exactly as given.
 *
 * Build:  gcc -O2 -o random_engine examples/engines/random_engine.c
 * Run:    tablas bot --server ws://127.0.0.1:8765/ws --name MyBot --password SECRET... \
 *             --engine ./random_engine --games tictactoe,connect4
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LINE 65536

static char line[LINE];

/* One line of stdin without its newline; 0 at the end of the input. */
static int read_line(void) {
    if (!fgets(line, sizeof line, stdin)) return 0;
    line[strcspn(line, "\r\n")] = '\0';
    return 1;
}

int main(void) {
    char **legal = NULL;
    int count = 0;
    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    while (read_line()) {
        if (strcmp(line, "tablas 1") == 0) {
            printf("ready\n");
            fflush(stdout);
        } else if (strncmp(line, "legal ", 6) == 0) {
            for (int i = 0; i < count; i++) free(legal[i]);
            count = atoi(line + 6);
            legal = realloc(legal, (size_t)(count > 0 ? count : 1) * sizeof *legal);
            for (int i = 0; i < count; i++) {
                if (!read_line()) return 0;
                legal[i] = strdup(line);
            }
        } else if (strncmp(line, "go ", 3) == 0 && count > 0) {
            printf("move %s\n", legal[rand() % count]);
            fflush(stdout);
        } else if (strcmp(line, "quit") == 0) {
            break;
        }
        /* game, position, state and result: not needed to play at random */
    }
    for (int i = 0; i < count; i++) free(legal[i]);
    free(legal);
    return 0;
}
