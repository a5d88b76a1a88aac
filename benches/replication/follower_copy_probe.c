// A probe of a follower's kernel copies on this machine, outside the broker (docs/benchmarks.md,
// "Where the time goes"). A child sendfile()s a page-cached file to a loopback TCP socket, as a
// leader serves a follower; the parent receives it into a file and prints its own CPU seconds
// per GB (the child prints its CPU seconds on stderr).
//   mode 0: recv into a buffer, CRC-32C it, pwrite it (what a kcli follower does)
//   mode 1: splice socket -> pipe -> file
//   mode 2: mode 1, then pread the bytes back and CRC-32C them (a splicing follower that checks)
//   mode 3: mode 0 without the CRC
// Build: gcc -O2 -msse4.2 -o /tmp/probe benches/replication/follower_copy_probe.c
// Run:   /tmp/probe SRC DST MODE BYTES   (SRC: a 1 GiB file, read once into the page cache)
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <nmmintrin.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (1 << 20)

static double cpu_seconds(void) {
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return r.ru_utime.tv_sec + r.ru_utime.tv_usec / 1e6 + r.ru_stime.tv_sec +
           r.ru_stime.tv_usec / 1e6;
}

static unsigned crc32c(const unsigned char *p, size_t n, unsigned crc) {
    unsigned long long x = crc;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) x = _mm_crc32_u64(x, *(const unsigned long long *)(p + i));
    for (; i < n; i++) x = _mm_crc32_u8((unsigned)x, p[i]);
    return (unsigned)x;
}

static void die(const char *what) {
    perror(what);
    exit(1);
}

static void send_file(struct sockaddr_in *to, const char *src, long total) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(s, (struct sockaddr *)to, sizeof *to) != 0) die("connect");
    int f = open(src, O_RDONLY);
    for (long sent = 0; sent < total;) {
        off_t off = sent % (1L << 30);
        ssize_t n = sendfile(s, f, &off, CHUNK);
        if (n <= 0) die("sendfile");
        sent += n;
    }
    fprintf(stderr, "sender cpu %.3f s\n", cpu_seconds());
    close(s);
}

int main(int argc, char **argv) {
    if (argc != 5) {
        fprintf(stderr, "usage: %s SRC DST MODE BYTES\n", argv[0]);
        return 2;
    }
    int mode = atoi(argv[3]);
    long total = atol(argv[4]);
    int listener = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof addr;
    if (bind(listener, (struct sockaddr *)&addr, len) != 0 || listen(listener, 1) != 0) die("listen");
    getsockname(listener, (struct sockaddr *)&addr, &len);
    if (fork() == 0) {
        send_file(&addr, argv[1], total);
        return 0;
    }
    int s = accept(listener, NULL, NULL);
    int out = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0644);
    unsigned char *buf = malloc(CHUNK);
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0) die("pipe");
    fcntl(pipe_fds[1], F_SETPIPE_SZ, CHUNK);
    double start = cpu_seconds();
    long got = 0;
    unsigned crc = 0;
    while (got < total) {
        ssize_t n;
        if (mode == 0 || mode == 3) {
            n = recv(s, buf, CHUNK, MSG_WAITALL);
            if (n <= 0) break;
            if (mode == 0) crc = crc32c(buf, n, crc);
            if (pwrite(out, buf, n, got) != n) die("pwrite");
        } else {
            n = splice(s, NULL, pipe_fds[1], NULL, CHUNK, SPLICE_F_MOVE);
            if (n <= 0) break;
            loff_t at = got;
            for (ssize_t moved = 0; moved < n;) {
                ssize_t k = splice(pipe_fds[0], NULL, out, &at, n - moved, SPLICE_F_MOVE);
                if (k <= 0) die("splice to file");
                moved += k;
            }
            if (mode == 2) {
                if (pread(out, buf, n, got) != n) die("pread");
                crc = crc32c(buf, n, crc);
            }
        }
        got += n;
    }
    double used = cpu_seconds() - start;
    wait(NULL);
    printf("mode %d: %.2f GB, receiver cpu %.3f s/GB (crc %08x)\n", mode, got / 1e9,
           used / (got / 1e9), crc);
    return 0;
}
