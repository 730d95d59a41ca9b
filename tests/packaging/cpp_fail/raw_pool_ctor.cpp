// SPDX-License-Identifier: MIT
// The contiguous constructor refuses a raw bw_pool * too.
// expect: bw_pool ?\*.*(const bw::pool|const pool)|no matching (constructor|function)
#include "bufwriter.hpp"

int main() {
    bw::pool p = bw::pool::create();
#ifdef BW_FAIL
    bw::writer w(p.get(), 64);
#else
    bw::writer w(p, 64);
#endif
    return w.error() == BW_OK ? 0 : 1;
}
