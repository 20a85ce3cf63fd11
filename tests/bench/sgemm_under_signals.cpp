// SPDX-License-Identifier: MIT
// The cause of the stopped runs that aborted with a corrupted heap (docs/benchmarks.md), shown
// without optlog: oneDNN's dnnl_sgemm, called again and again on one thread, while a second thread
// sends it a signal every 50 µs whose handler does nothing but count. glibc checks the heap at
// each malloc and free; each product is checked against a plain loop.
//
//   sgemm_under_signals [N] [ROUNDS] [signals: 0 or 1] [handler on its own stack: 0 or 1]
//
// Libraries' kernels may keep data up to 128 bytes below the stack pointer (the x86-64 ABI's red
// zone), which the kernel skips when it writes a handler's frame; anything further below is
// overwritten. Exits 0 when every product was right and the heap held, 1 on a wrong product; a
// corrupted heap ends it by glibc's abort.
#include <oneapi/dnnl/dnnl.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include <pthread.h>
#include <unistd.h>

namespace {

std::atomic<long> g_taken{0};

void countSignal(int)
{
    g_taken.fetch_add(1, std::memory_order_relaxed);
}

// The handler for SIGUSR2; with `ownStack`, it runs on a stack of its own instead of below the
// interrupted code's stack pointer.
void installHandler(bool ownStack)
{
    struct sigaction action = {};
    action.sa_handler = countSignal;
    action.sa_flags = SA_RESTART;
    sigemptyset(&action.sa_mask);
    if (ownStack) {
        static std::vector<char> stack(1 << 16);
        stack_t alternate = {};
        alternate.ss_sp = stack.data();
        alternate.ss_size = stack.size();
        sigaltstack(&alternate, nullptr);
        action.sa_flags |= SA_ONSTACK;
    }
    sigaction(SIGUSR2, &action, nullptr);
}

} // namespace

int main(int argc, char **argv)
{
    const int n = argc > 1 ? std::atoi(argv[1]) : 128;
    const int rounds = argc > 2 ? std::atoi(argv[2]) : 20000;
    const bool signals = argc > 3 ? std::atoi(argv[3]) != 0 : true;
    const bool ownStack = argc > 4 && std::atoi(argv[4]) != 0;
    if (n < 1 || rounds < 1) {
        std::fprintf(stderr, "usage: sgemm_under_signals [N >= 1] [ROUNDS >= 1] [signals 0|1] [own stack 0|1]\n");
        return 2;
    }
    installHandler(ownStack);

    const size_t size = size_t(n) * size_t(n);
    std::vector<float> a(size), b(size), c(size), expected(size);
    for (size_t i = 0; i < size; ++i) {
        a[i] = float(i * 7 % 13) / 13.0f;
        b[i] = float(i * 5 % 11) / 11.0f;
    }
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
            double sum = 0;
            for (int k = 0; k < n; ++k)
                sum += double(a[size_t(i * n + k)]) * double(b[size_t(k * n + j)]);
            expected[size_t(i * n + j)] = float(sum);
        }

    const pthread_t computing = pthread_self();
    std::atomic<bool> done{false};
    std::thread sender;
    if (signals)
        sender = std::thread([&] {
            while (!done.load()) {
                pthread_kill(computing, SIGUSR2);
                usleep(50);
            }
        });
    long wrong = 0;
    for (int round = 0; round < rounds; ++round) {
        if (dnnl_sgemm('N', 'N', n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n) != dnnl_success) {
            std::fprintf(stderr, "dnnl_sgemm failed\n");
            return 3;
        }
        for (size_t i = 0; i < size; ++i)
            if (std::fabs(c[i] - expected[i]) > 1e-3f * (1.0f + std::fabs(expected[i]))) {
                ++wrong;
                break;
            }
        std::free(std::malloc(size_t(1000 + round % 5000))); // glibc checks the chunks it passes
    }
    done.store(true);
    if (sender.joinable())
        sender.join();
    const dnnl_version_t *version = dnnl_version();
    std::printf("oneDNN %d.%d.%d, n=%d, %d products, %ld signals taken, %ld wrong products\n", version->major,
                version->minor, version->patch, n, rounds, g_taken.load(), wrong);
    return wrong ? 1 : 0;
}
