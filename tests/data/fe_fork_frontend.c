/* A stand-in for nvcc's front ends in tests/test_fe_fork.py: it reads its input with fopen + stdio as cudafe++
 * and cicc do and, like them, opens its output only at the end: every byte read goes to out.txt in its working
 * folder. It obeys lines of the input:
 * "WRITE <path>" tries to create <path> (what an attacker who took over a compiler would do; it reports
 * "write <path>: ok" or "... denied" on stderr), "SOCKET" opens a UDP socket (the same, "udp socket: ..."),
 * "CRASH" dies of SIGSEGV, "SLEEP <s>" sleeps, "EXIT <n>" calls
 * exit(n), "RETURN <n>" returns n from main. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    FILE *in = fopen(argv[1], "r");
    if (!in) return 3;
    size_t len = 0, cap = 1 << 20;
    char *all = malloc(cap);
    char line[4096];
    int ret = 0;
    while (fgets(line, sizeof line, in)) {
        size_t n = strlen(line);
        if (len + n > cap) all = realloc(all, cap *= 2);
        memcpy(all + len, line, n);
        len += n;
        line[strcspn(line, "\n")] = 0;
        if (strncmp(line, "WRITE ", 6) == 0) {
            FILE *f = fopen(line + 6, "w");
            fprintf(stderr, "write %s: %s\n", line + 6, f ? "ok" : "denied");
            if (f) fclose(f);
        } else if (strcmp(line, "SOCKET") == 0) {
            int fd = socket(AF_INET, SOCK_DGRAM, 0);
            fprintf(stderr, "udp socket: %s\n", fd >= 0 ? "ok" : "denied");
        } else if (strcmp(line, "CRASH") == 0) {
            raise(SIGSEGV);
        } else if (strncmp(line, "SLEEP ", 6) == 0) {
            sleep((unsigned)atoi(line + 6));
        } else if (strncmp(line, "EXIT ", 5) == 0) {
            exit(atoi(line + 5));
        } else if (strncmp(line, "RETURN ", 7) == 0) {
            ret = atoi(line + 7);
        }
    }
    FILE *out = fopen("out.txt", "w");
    if (!out) return 4;
    fwrite(all, 1, len, out);
    fclose(out);
    return ret;
}
