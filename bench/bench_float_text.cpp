// SPDX-License-Identifier: MIT
// bench_float_text.cpp - T: doubles as text, 64K values a run.
//
//   Sets (the `set` argument): 0 random doubles of every exponent (random
//   bit patterns, NaN and infinities left out): 17 digits mostly, every
//   notation; 1 prices: 0.00 to 99999.99 in cents, 1..7 digits.
//   Methods, each into one contiguous writer kept across iterations
//   (bw_clear between), a ',' after each value:
//     snprintf_17g         snprintf("%.17g") then bw_write: reads back, but
//                          17 digits (0.1 -> 0.10000000000000001)
//     print_check_reprint  cJSON's way to the shortest that reads back:
//                          "%1.15g", sscanf it back, "%1.17g" when it differs
//     bw_put_dec_f64       the shortest digits that read back
//     bw_enc_dec_f64       the same through the cursor, one span for all
//     bw_put_dec_f64_json  bw_put_dec_f64_flags(BW_DEC_JSON_REAL): jansson's
//                          and yyjson's layout ("3.0", "1e17")
//     bw_fmt_dec_f64_room  bw_fmt_dec_f64(BW_DEC_JSON) into one span, given
//                          the room left each time (an exact-room buffer)
//   Baseline: snprintf_17g. bytes_per_value: the text's length, ',' included.
#include "bench_common.h"

#include <cstdio>
#include <cstring>
#include <vector>

namespace bwbench {
namespace {

constexpr size_t kValues = 1u << 16;

std::vector<double> make_values(int set)
{
    std::vector<double> v(kValues);
    uint64_t s = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < kValues; i++) {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        uint64_t r = s * 2685821657736338717ull;
        if (set == 0) {
            if ((r >> 52 & 0x7ff) == 0x7ff) r ^= uint64_t(1) << 62; // finite
            memcpy(&v[i], &r, sizeof r);
        } else {
            v[i] = static_cast<double>(r % 10000000) / 100.0;
        }
    }
    return v;
}

template <int Method> void put_all(bw_writer *w, const std::vector<double> &v)
{
    char b[40];
    if (Method == 5) {
        size_t room = 0, k = 0;
        unsigned char *p = static_cast<unsigned char *>(
            bw_get_span(w, v.size() * (BW_DEC_F64_MAX + 1), &room));
        if (p == nullptr) return;
        unsigned char *end = p + room;
        for (double d : v) {
            bw_fmt_dec_f64(p, static_cast<size_t>(end - p), d, BW_DEC_JSON, &k);
            p += k;
            *p++ = ',';
        }
        bw_advance_to(w, p);
        return;
    }
    if (Method == 3) {
        unsigned char *p =
            static_cast<unsigned char *>(bw_get_span(w, v.size() * (BW_DEC_F64_MAX + 1), nullptr));
        if (p == nullptr) return;
        for (double d : v) {
            p = bw_enc_dec_f64(p, d);
            *p++ = ',';
        }
        bw_advance_to(w, p);
        return;
    }
    for (double d : v) {
        if (Method == 0) {
            int n = snprintf(b, sizeof b, "%.17g", d);
            bw_write(w, b, static_cast<size_t>(n));
        } else if (Method == 1) {
            double back = 0;
            int n = snprintf(b, sizeof b, "%1.15g", d);
            if (sscanf(b, "%lg", &back) != 1 || back != d) n = snprintf(b, sizeof b, "%1.17g", d);
            bw_write(w, b, static_cast<size_t>(n));
        } else if (Method == 4) {
            bw_put_dec_f64_flags(w, d, BW_DEC_JSON_REAL);
        } else {
            bw_put_dec_f64(w, d);
        }
        bw_put_u8(w, ',');
    }
}

template <int Method> void bm_float_text(benchmark::State &st)
{
    std::vector<double> v = make_values(static_cast<int>(st.range(0)));
    bw_writer w = BW_WRITER_INIT;
    bw_reserve(&w, v.size() * (BW_DEC_F64_MAX + 1));
    put_all<Method>(&w, v); // warm-up, and the length every iteration must give
    size_t expect = bw_len(&w);
    bool bad = bw_error(&w) != BW_OK;
    AllocScope as;
    for (auto _ : st) {
        bw_clear(&w);
        put_all<Method>(&w, v);
        if (bw_error(&w) != BW_OK || bw_len(&w) != expect) bad = true;
        uint64_t s = checksum(bw_data(&w), bw_len(&w));
        benchmark::DoNotOptimize(s);
    }
    as.report(st);
    st.counters["bytes_per_value"] = static_cast<double>(expect) / static_cast<double>(kValues);
    st.counters["ns_per_value"] = benchmark::Counter(
        static_cast<double>(kValues), benchmark::Counter::kIsIterationInvariantRate |
                                          benchmark::Counter::kInvert);
    st.SetBytesProcessed(static_cast<int64_t>(st.iterations()) * static_cast<int64_t>(expect));
    bw_release(&w);
    if (bad) st.SkipWithError("wrong result");
}

void reg(const char *name, void (*fn)(benchmark::State &))
{
    benchmark::RegisterBenchmark(name, fn)
        ->Arg(0)
        ->Arg(1)
        ->ArgName("set")
        ->UseRealTime()
        ->Unit(benchmark::kMicrosecond)
        ->MinTime(0.1);
}

} // namespace

// Floating-point text, the shortest digits against printf.
void register_float_text(const Options &)
{
    reg("T/snprintf_17g", bm_float_text<0>);
    reg("T/print_check_reprint", bm_float_text<1>);
    reg("T/bw_put_dec_f64", bm_float_text<2>);
    reg("T/bw_enc_dec_f64", bm_float_text<3>);
    reg("T/bw_put_dec_f64_json", bm_float_text<4>);
    reg("T/bw_fmt_dec_f64_room", bm_float_text<5>);
}

} // namespace bwbench
