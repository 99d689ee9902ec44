/* A fork server inside nvcc's front ends (cudafe++, cicc), loaded with LD_PRELOAD: see fe_fork.py.
 *
 * Every CUDA build of a run feeds cudafe++ and cicc a preprocessed file that starts with the same ~14 MB: the
 * expansion of load_inline's prelude (torch/types.h, cuda.h, cuda_runtime.h). Parsing it is ~60 % of each front
 * end's time. The trusted warmer starts each front end once per flag set on a file holding only that prefix;
 * this library makes the prefix file an in-memory stream (fopencookie) and, when the front end has read all of
 * it and asks for more, turns the process into a server: for each request (a build's working folder and its
 * whole preprocessed input, as file descriptors) it forks, and the child goes on reading the build's input
 * from the same offset. The child is the front end exactly as if it had read the build's file from the start
 * (the driver checked that file starts with the prefix byte for byte); it writes its outputs, under the fixed
 * relative names of the zygote's command line, into the build's folder.
 *
 * The child is confined before it reads a byte of the build's input: its own session (the host's scheduler
 * groups it like the build's other compilers), the requester's resource limits and nice, no_new_privs, a
 * Landlock domain that may read the system folders and write only the build's folder (and no TCP where the
 * kernel has Landlock ABI 4) and the compile workers' seccomp deny list (no socket but AF_UNIX, ...). Where Landlock cannot be applied the child exits 98 and the driver runs the stock
 * front end inside the build's own sandbox: never a weaker path. It reports its exit status on the request's
 * connection (from exit(), _exit() or main's return) and dies when that connection closes (the build was
 * stopped).
 *
 * Environment (zygote only): MKB_FE_INPUT (the prefix file, as on the command line), MKB_FE_SOCK (the socket
 * to listen on), MKB_FE_READ (':'-separated folders the child may read), MKB_FE_SECCOMP (the BPF program, hex),
 * MKB_FE_IDLE_S (the zygote exits after
 * that many seconds without a request, default 600: the warmer's stop kills it, this covers a run that was
 * killed itself).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

#define N_FDS 4 /* working folder, input, stdout, stderr */

struct request { /* the payload beside the descriptors */
    uint32_t magic;
    int32_t nice;
    uint64_t as_limit, cpu_limit, data_limit; /* RLIM_INFINITY where unlimited */
};
#define MAGIC 0x6d6b6266u /* "mkbf" */

static int in_fd = -1;   /* zygote: the prefix file; child: the build's whole input */
static off_t in_len = 0; /* zygote: the prefix's length */
static off_t pos = 0;
static int is_child = 0;
static int conn_fd = -1;

static void serve(void);

static ssize_t c_read(void *cookie, char *buf, size_t size) {
    (void)cookie;
    if (!is_child && pos >= in_len) serve(); /* returns only in a forked child */
    if (!is_child && (off_t)size > in_len - pos) size = (size_t)(in_len - pos);
    ssize_t n = pread(in_fd, buf, size, pos);
    if (n > 0) pos += n;
    return n;
}

static int c_seek(void *cookie, off64_t *off, int whence) {
    (void)cookie;
    off_t np = whence == SEEK_SET ? *off : whence == SEEK_CUR ? pos + *off : -1;
    if (np < 0 || (whence != SEEK_SET && whence != SEEK_CUR)) { errno = EINVAL; return -1; }
    pos = np;
    *off = np;
    return 0;
}

static int c_close(void *cookie) { (void)cookie; return 0; }

static FILE *open_wrapped(const char *path, const char *mode, const char *real_name) {
    const char *want = getenv("MKB_FE_INPUT");
    if (want && in_fd < 0 && !is_child && mode[0] == 'r' && strcmp(path, want) == 0) {
        in_fd = open(path, O_RDONLY | O_CLOEXEC);
        struct stat st;
        if (in_fd < 0 || fstat(in_fd, &st) < 0) return NULL;
        in_len = st.st_size;
        cookie_io_functions_t io = {c_read, NULL, c_seek, c_close};
        return fopencookie(NULL, mode, io);
    }
    FILE *(*real)(const char *, const char *) = (FILE * (*)(const char *, const char *)) dlsym(RTLD_NEXT, real_name);
    return real(path, mode);
}

FILE *fopen(const char *path, const char *mode) { return open_wrapped(path, mode, "fopen"); }
FILE *fopen64(const char *path, const char *mode) { return open_wrapped(path, mode, "fopen64"); }

/* status and CPU seconds: the child is not the requester's descendant, so its rusage would go uncounted */
static void report(int status) {
    if (conn_fd >= 0) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        struct __attribute__((packed)) {
            int32_t status;
            double cpu_s;
        } msg = {status, ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6};
        if (write(conn_fd, &msg, sizeof msg) < 0) { /* the requester is gone; nothing to tell */ }
        conn_fd = -1;
    }
}

void exit(int status) {
    fflush(NULL);
    report(status);
    void (*real)(int) = (void (*)(int))dlsym(RTLD_NEXT, "exit");
    real(status);
    __builtin_unreachable();
}

void _exit(int status) {
    report(status);
    void (*real)(int) = (void (*)(int))dlsym(RTLD_NEXT, "_exit");
    real(status);
    __builtin_unreachable();
}

/* main's return reaches libc's exit without our wrapper: wrap main. */
static int (*real_main)(int, char **, char **);
static int main_wrapper(int argc, char **argv, char **envp) { exit(real_main(argc, argv, envp)); }

int __libc_start_main(int (*main)(int, char **, char **), int argc, char **argv, void (*init)(void),
                      void (*fini)(void), void (*rtld_fini)(void), void *stack_end) {
    int (*real)(int (*)(int, char **, char **), int, char **, void (*)(void), void (*)(void), void (*)(void), void *) =
        (int (*)(int (*)(int, char **, char **), int, char **, void (*)(void), void (*)(void), void (*)(void),
                 void *))dlsym(RTLD_NEXT, "__libc_start_main");
    real_main = main;
    return real(main_wrapper, argc, argv, init, fini, rtld_fini, stack_end);
}

static int recv_request(int sock, int *fds, struct request *req) {
    struct iovec iov = {req, sizeof *req};
    char ctl[CMSG_SPACE(sizeof(int) * N_FDS)];
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = ctl;
    msg.msg_controllen = sizeof ctl;
    ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC | MSG_WAITALL);
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) return -1;
    int got = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
    memcpy(fds, CMSG_DATA(c), sizeof(int) * (got < N_FDS ? got : N_FDS));
    if (got != N_FDS || n != (ssize_t)sizeof *req || req->magic != MAGIC) {
        for (int i = 0; i < got && i < N_FDS; i++) close(fds[i]);
        return -1;
    }
    return 0;
}

static void *watch(void *arg) { /* the build was stopped: its connection closed */
    (void)arg;
    int fd = conn_fd;
    struct pollfd p = {fd, POLLRDHUP, 0};
    for (;;) {
        if (poll(&p, 1, -1) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR))) {
            void (*real)(int) = (void (*)(int))dlsym(RTLD_NEXT, "_exit");
            real(137);
        }
    }
    return NULL;
}

static int add_rule(int ruleset, int dirfd, uint64_t access) {
    struct landlock_path_beneath_attr pb = {access, dirfd};
    return (int)syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
}

/* Read (and run) the listed folders, write only beneath the working folder; no TCP from ABI 4 on. */
static int confine(int workdir) {
    int abi = (int)syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < 1) return -1;
    uint64_t read_access = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
    uint64_t all = read_access | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
                   LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR |
                   LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
                   LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;
#ifdef LANDLOCK_ACCESS_FS_REFER
    if (abi >= 2) all |= LANDLOCK_ACCESS_FS_REFER;
#endif
#ifdef LANDLOCK_ACCESS_FS_TRUNCATE
    if (abi >= 3) all |= LANDLOCK_ACCESS_FS_TRUNCATE;
#endif
    struct {
        uint64_t fs, net, scoped;
    } attr = {all, 0, 0};
    size_t attr_size = sizeof(uint64_t);
#ifdef LANDLOCK_ACCESS_NET_CONNECT_TCP
    if (abi >= 4) {
        attr.net = LANDLOCK_ACCESS_NET_BIND_TCP | LANDLOCK_ACCESS_NET_CONNECT_TCP;
        attr_size = 2 * sizeof(uint64_t);
    }
#endif
    int rs = (int)syscall(SYS_landlock_create_ruleset, &attr, attr_size, 0);
    if (rs < 0) return -1;
    uint64_t write_access = all & ~(uint64_t)(LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_BLOCK);
    int ok = add_rule(rs, workdir, write_access) == 0;
    const char *list = getenv("MKB_FE_READ");
    char *copy = strdup(list ? list : "");
    for (char *save = NULL, *p = strtok_r(copy, ":", &save); ok && p; p = strtok_r(NULL, ":", &save)) {
        int fd = open(p, O_PATH | O_CLOEXEC);
        if (fd < 0) continue; /* a folder this host lacks */
        struct stat st;
        uint64_t acc = read_access;
        if (fstat(fd, &st) == 0 && !S_ISDIR(st.st_mode)) acc = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_EXECUTE;
        ok = add_rule(rs, fd, acc) == 0;
        close(fd);
    }
    free(copy);
    int devnull = open("/dev/null", O_PATH | O_CLOEXEC);
    if (ok && devnull >= 0) ok = add_rule(rs, devnull, LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE) == 0;
    if (devnull >= 0) close(devnull);
    ok = ok && prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && syscall(SYS_landlock_restrict_self, rs, 0) == 0;
    close(rs);
    return ok ? 0 : -1;
}

/* The compile workers' seccomp deny list (multikernelbench/util/seccomp.py, built by the trusted warmer and
 * handed over as hex in MKB_FE_SECCOMP): no sockets but AF_UNIX, no namespaces, no ptrace, ... */
static int filter_syscalls(void) {
    const char *hex = getenv("MKB_FE_SECCOMP");
    if (!hex || !*hex) return 0; /* the warmer found no seccomp on this kernel: Landlock alone, as the workers */
    size_t n = strlen(hex) / 2;
    if (n == 0 || n % sizeof(struct sock_filter) != 0) return -1;
    unsigned char *code = malloc(n);
    if (!code) return -1;
    for (size_t i = 0; i < n; i++) {
        unsigned int byte;
        if (sscanf(hex + 2 * i, "%2x", &byte) != 1) { free(code); return -1; }
        code[i] = (unsigned char)byte;
    }
    struct sock_fprog prog = {(unsigned short)(n / sizeof(struct sock_filter)), (struct sock_filter *)code};
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) == 0 ? 0 : -1;
}

static void limit(int resource, uint64_t value) {
    struct rlimit r;
    if (value == (uint64_t)RLIM_INFINITY || getrlimit(resource, &r) != 0) return;
    if (r.rlim_max != RLIM_INFINITY && value > r.rlim_max) value = r.rlim_max;
    r.rlim_cur = value;
    if (r.rlim_max == RLIM_INFINITY || r.rlim_max > value) r.rlim_max = value;
    setrlimit(resource, &r);
}

static void become_child(int *fds, const struct request *req, int conn) {
    is_child = 1;
    conn_fd = conn;
    signal(SIGCHLD, SIG_DFL);
    setsid();
    if (req->nice > getpriority(PRIO_PROCESS, 0)) setpriority(PRIO_PROCESS, 0, req->nice);
    limit(RLIMIT_AS, req->as_limit);
    limit(RLIMIT_CPU, req->cpu_limit);
    limit(RLIMIT_DATA, req->data_limit);
    if (fchdir(fds[0]) != 0) _exit(96);
    if (confine(fds[0]) != 0 || filter_syscalls() != 0) _exit(98);
    /* after the confinement, which binds only the calling thread and what it starts later */
    pthread_t t;
    if (pthread_create(&t, NULL, watch, NULL) != 0) _exit(97);
    char ack = 'A'; /* taken: the requester stops waiting for the queue and waits for the front end */
    if (write(conn, &ack, 1) != 1) _exit(95);
    dup2(fds[2], 1);
    dup2(fds[3], 2);
    close(in_fd);
    in_fd = fds[1];
    close(fds[0]);
    close(fds[2]);
    close(fds[3]);
}

static void serve(void) {
    const char *path = getenv("MKB_FE_SOCK");
    if (!path) return; /* not a zygote: the prefix file simply ends */
    int ls = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    /* A socket's name is at most 107 bytes: bound as /proc/self/fd/<its folder>/<name>.<pid> (a build root may
     * lie deep), then renamed into place, so that a socket that exists accepts. */
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) _exit(90);
    *slash = 0;
    int dfd = open(dir[0] ? dir : "/", O_PATH | O_DIRECTORY | O_CLOEXEC);
    struct sockaddr_un b;
    memset(&b, 0, sizeof b);
    b.sun_family = AF_UNIX;
    int n = snprintf(b.sun_path, sizeof b.sun_path, "/proc/self/fd/%d/%s.%d", dfd, slash + 1, (int)getpid());
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.%d", path, (int)getpid());
    unlink(tmp);
    if (ls < 0 || dfd < 0 || n >= (int)sizeof b.sun_path || bind(ls, (struct sockaddr *)&b, sizeof b) < 0 ||
        listen(ls, 128) < 0 || rename(tmp, path) < 0)
        _exit(90);
    close(dfd);
    signal(SIGCHLD, SIG_IGN); /* children are reaped by the kernel; their status goes to their requester */
    const char *idle = getenv("MKB_FE_IDLE_S");
    int idle_ms = idle ? atoi(idle) * 1000 : 600000;
    for (;;) {
        struct pollfd waiting = {ls, POLLIN, 0};
        if (poll(&waiting, 1, idle_ms) == 0) { /* nobody asked for a while: a run that died without stopping us */
            unlink(path);
            _exit(0);
        }
        int c = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0) continue;
        /* One connection at a time: a requester that connects and sends nothing (any process that can reach the
         * socket, a candidate's build-time code included) holds the queue up 2 s at most. */
        struct timeval two = {2, 0};
        setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &two, sizeof two);
        int fds[N_FDS];
        struct request req;
        if (recv_request(c, fds, &req) < 0) { close(c); continue; }
        pid_t p = fork();
        if (p == 0) {
            close(ls);
            become_child(fds, &req, c);
            return;
        }
        for (int i = 0; i < N_FDS; i++) close(fds[i]);
        close(c);
    }
}
