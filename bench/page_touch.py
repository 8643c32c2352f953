"""What new memory costs on this machine: maps N MiB of anonymous memory and
writes one byte per 4 KiB page, timing the first touch (the page fault and
the kernel zeroing the page; on a VM, the host backing it too).

    .deps/venv/bin/python bench/page_touch.py 2048 [--huge]

Prints MiB, seconds and microseconds per 4 KiB page. `--huge` asks for
transparent huge pages (MADV_HUGEPAGE). A cold `thaw serve` fills its batch
cache with new memory, so this figure bounds what that costs here
(docs/benchmarks.md, "The table's batches leave the cache as they are").
"""
import argparse
import mmap
import time

PAGE = 4096


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mib", type=int)
    ap.add_argument("--huge", action="store_true", help="madvise(MADV_HUGEPAGE)")
    a = ap.parse_args()
    n = a.mib << 20
    t0 = time.perf_counter()
    m = mmap.mmap(-1, n, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    m.madvise(mmap.MADV_HUGEPAGE if a.huge else mmap.MADV_NOHUGEPAGE)
    for i in range(0, n, PAGE):
        m[i] = 1
    s = time.perf_counter() - t0
    print(f"{a.mib} MiB{' (huge pages)' if a.huge else ''}: {s:.3f} s, {s * 1e6 / (n // PAGE):.2f} us a 4 KiB page")
    m.close()


if __name__ == "__main__":
    main()
