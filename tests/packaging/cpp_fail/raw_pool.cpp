// SPDX-License-Identifier: MIT
// A writer cannot be made from a raw bw_pool *: it takes a bw::pool, whose
// ownership it shares, so it cannot outlive the pool (tests/packaging/run.sh
// compiles this with and without BW_FAIL).
// expect: (bw_pool ?\*.*const bw::pool|const bw::pool.*bw_pool ?\*)
#include "bufwriter.hpp"

int main() {
    bw::pool p = bw::pool::create();
#ifdef BW_FAIL
    bw::writer w = bw::writer::chain(p.get());
#else
    bw::writer w = bw::writer::chain(p);
#endif
    return w.error() == BW_OK ? 0 : 1;
}
