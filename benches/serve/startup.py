#!/usr/bin/env python3
"""Time from starting `kcli serve` to its port accepting connections (and a Metadata answer
being possible), on an empty data dir and on one holding PARTITIONS partitions after a clean
shutdown. Usage: startup.py KCLI_BINARY [PARTITIONS] [RUNS]"""
import os, signal, socket, subprocess, sys, tempfile, time

def free_port():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); p = s.getsockname()[1]; s.close(); return p

def start(binary, data, port, extra=()):
    args = [binary, "serve", "--override", f"listeners=PLAINTEXT://127.0.0.1:{port}",
            "--override", f"log.dirs={data}", *extra]
    t0 = time.perf_counter()
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.05).close()
            return proc, time.perf_counter() - t0
        except OSError:
            if time.perf_counter() - t0 > 10:
                proc.kill(); raise SystemExit("broker did not start in 10 s")
            time.sleep(0.001)

def stop(proc):
    proc.send_signal(signal.SIGTERM); proc.wait(timeout=30)

def main():
    binary = sys.argv[1]
    partitions = int(sys.argv[2]) if len(sys.argv) > 2 else 100
    runs = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    empty, loaded = [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as d:
            port = free_port()
            proc, t = start(binary, d, port, ["--override", f"num.partitions={partitions}"])
            empty.append(t)
            # Auto-create a topic with `partitions` partitions through kcat's metadata request.
            subprocess.run(["kcat", "-b", f"127.0.0.1:{port}", "-L", "-t", "many"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=30)
            stop(proc)
            proc, t = start(binary, d, port)
            loaded.append(t)
            stop(proc)
    med = lambda xs: sorted(xs)[len(xs) // 2] * 1000
    print(f"| empty data dir | {med(empty):.1f} ms |")
    print(f"| {partitions} partitions, after a clean shutdown | {med(loaded):.1f} ms |")

main()
