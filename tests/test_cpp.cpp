// SPDX-License-Identifier: MIT
// test_cpp.cpp - the public header compiles as C++ (extern "C", explicit
// casts in the inline code) and works from C++; the C++ wrapper,
// bufwriter.hpp: who keeps a pool alive, view() in every mode, and the
// calls that return bytes (cstr, iovec, detach, append, fopen). Built at
// C++17 in the normal flavour and with ASan+UBSan in the asan one, where a
// writer that outlived its pool would be a use after free.
#include "bufwriter.hpp"

#include <criterion/criterion.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <sys/uio.h>
#include <utility>

Test(cpp, header_works_from_cpp)
{
    bw_writer w = BW_WRITER_INIT;
    cr_assert_eq(bw_put_u16be(&w, 0x0102), BW_OK);
    cr_assert_eq(bw_put_uvarint(&w, 300), BW_OK);
    cr_assert_eq(bw_printf(&w, "%s", "c++"), BW_OK);
    cr_assert_eq(bw_write(&w, "!", 1), BW_OK);
    static const unsigned char want[] = {1, 2, 0xac, 0x02, 'c', '+', '+', '!'};
    cr_assert_eq(bw_len(&w), sizeof want);
    cr_assert(std::memcmp(bw_data(&w), want, sizeof want) == 0);
    bw_release(&w);
}

// BW_VERSION_NUMBER is usable in #if and agrees with the other macros and
// with the library actually linked.
#if !defined(BW_VERSION_NUMBER) || BW_VERSION_NUMBER < 300 || \
    BW_VERSION_NUMBER != BW_VERSION_MAJOR * 10000 + BW_VERSION_MINOR * 100 + BW_VERSION_PATCH
#  error "BW_VERSION_NUMBER is missing or wrong"
#endif

Test(cpp, version_number_matches_the_linked_library)
{
    unsigned major = 0, minor = 0, patch = 0;
    cr_assert_eq(std::sscanf(bw_version(), "%u.%u.%u", &major, &minor, &patch), 3);
    cr_assert_eq(static_cast<long>(major * 10000 + minor * 100 + patch), BW_VERSION_NUMBER);
    char s[32];
    std::snprintf(s, sizeof s, "%d.%d.%d", BW_VERSION_MAJOR, BW_VERSION_MINOR, BW_VERSION_PATCH);
    cr_assert_str_eq(s, BW_VERSION_STRING);
}

// ---------------------------------------------------------------- wrapper --
// A backing allocator that counts live blocks: a pool gives every block back
// when it is destroyed, so zero live blocks means no pool is left.
static long live_blocks;
static void *count_alloc(void *, size_t n) {
    live_blocks++;
    return std::malloc(n);
}
static void count_free(void *, void *b, size_t) {
    live_blocks--;
    std::free(b);
}
static const bw_allocator counting = {count_alloc, nullptr, count_free, nullptr};

static bw::pool counted_pool() {
    bw_pool_options o{};
    o.allocator = &counting;
    o.flags = BW_POOL_NO_THREAD_CACHE; // every block back to the shared level
    bw::pool p = bw::pool::create(o);
    cr_assert_eq(p.status(), BW_OK);
    return p;
}

// The trap of 0.2's wrapper: a pool declared after the writer is destroyed
// first at scope end, and the writer then gave its block back to a freed
// pool. Now the writer keeps the pool alive until it is done with it.
Test(cpp_wrapper, pool_declared_after_the_writer_outlives_it)
{
    live_blocks = 0;
    {
        bw::writer w;
        bw::pool p = counted_pool();
        w = bw::writer(p);
        cr_assert_eq(w.write(std::string(5000, 'x')), BW_OK);
        cr_assert_gt(live_blocks, 0);
    } // p's object goes first, then w releases into the pool, then the pool
    cr_assert_eq(live_blocks, 0, "the pool was never destroyed");
}

Test(cpp_wrapper, writer_moved_out_of_the_pools_scope_keeps_it)
{
    live_blocks = 0;
    bw::writer out;
    {
        bw::pool p = counted_pool();
        bw::writer w = bw::writer::chain(p);
        cr_assert_eq(w.write(std::string(9000, 'y')), BW_OK);
        out = std::move(w);
    }
    cr_assert_gt(live_blocks, 0, "the pool went with its object");
    bw_pool_stats s{};
    bw_pool_get_stats(out.get_pool(), &s); // a use after free if it had gone
    cr_assert_geq(s.outstanding_bytes, 9000u);
    cr_assert_eq(out.write(std::string(9000, 'z')), BW_OK); // still rents from it
    cr_assert_eq(out.len(), 18000u);
    out = bw::writer();
    cr_assert_eq(live_blocks, 0);
}

Test(cpp_wrapper, borrowed_pool_is_not_destroyed)
{
    bw_pool *raw = nullptr;
    cr_assert_eq(bw_pool_create(&raw, nullptr), BW_OK);
    {
        bw::pool p = bw::pool::borrow(raw);
        bw::writer w(p);
        cr_assert_eq(w.get_pool(), raw);
        cr_assert_eq(w.write("abc"), BW_OK);
    }
    bw_pool_stats s{};
    bw_pool_get_stats(raw, &s);
    cr_assert_eq(s.outstanding_bytes, 0u);
    cr_assert_geq(s.returns, 1u);
    bw_pool_destroy(raw);
}

// view(): every held byte, in every mode.
Test(cpp_wrapper, view_in_every_mode)
{
    bw::pool p = bw::pool::create();
    std::string want;
    for (int i = 0; i < 3000; i++) want += std::to_string(i) + ",";

    bw::writer c(p);
    bw::writer s = bw::writer::chain(p);
    unsigned char first[64];
    bw::writer b = bw::writer::buffer(first, sizeof first, p);
    std::string sent;
    bw::writer k = bw::writer::sink(
        [](void *ctx, const void *d, size_t n) -> ptrdiff_t {
            static_cast<std::string *>(ctx)->append(static_cast<const char *>(d), n);
            return static_cast<ptrdiff_t>(n);
        },
        &sent, 1 << 20, p);
    static char fixed_buf[1 << 15];
    bw::writer f = bw::writer::fixed(fixed_buf);
    bw::writer *all[] = {&c, &s, &b, &k, &f};
    for (bw::writer *w : all) {
        cr_assert(w->view().has_value() && w->view()->empty(), "empty before any write");
        for (size_t at = 0; at < want.size(); at += 1000) // pieces: blocks get linked
            cr_assert_eq(w->write(std::string_view(want).substr(at, 1000)), BW_OK);
    }
    cr_assert_null(s.data(), "the segmented writer's bytes span blocks");
    for (bw::writer *w : all) {
        std::optional<std::string_view> v = w->view();
        cr_assert(v.has_value());
        cr_assert(*v == want, "view() holds every byte (%zu of %zu)", v->size(), want.size());
    }
    cr_assert_not_null(s.data(), "pulled up into one block");
    cr_assert(sent.empty());
}

Test(cpp_wrapper, view_is_nullopt_when_the_bytes_cannot_be_joined)
{
    bw::writer s = bw::writer::chain();
    for (int i = 0; i < 4; i++) cr_assert_eq(s.write(std::string(5000, 'q')), BW_OK);
    cr_assert_null(s.data());
    cr_assert_eq(s.advance(1u << 30), BW_EINVAL); // an error is now recorded
    cr_assert(!s.view().has_value(), "no view while an error is recorded");
    s.clear_error();
    cr_assert(s.view().has_value() && s.view()->size() == 20000);
}

Test(cpp_wrapper, cstr_iovec_append)
{
    bw::writer s = bw::writer::chain();
    cr_assert_eq(s.write(std::string(6000, 'a')), BW_OK);
    cr_assert_eq(s.write(std::string(6000, 'b')), BW_OK);
    struct iovec iov[8];
    size_t n = s.iovec(iov, 8);
    cr_assert_geq(n, 2u);
    size_t total = 0;
    for (size_t i = 0; i < n; i++) total += iov[i].iov_len;
    cr_assert_eq(total, 12000u);

    bw::writer d;
    cr_assert_eq(d.append(s), BW_OK);
    cr_assert_eq(d.append(d), BW_OK); // itself: a second copy
    cr_assert_eq(d.len(), 24000u);
    const char *z = d.cstr();
    cr_assert_not_null(z);
    cr_assert_eq(std::strlen(z), 24000u);
    cr_assert_eq(z[5999], 'a');
    cr_assert_eq(z[6000], 'b');

    char small[4];
    bw::writer f = bw::writer::fixed(small);
    cr_assert_eq(f.write("abcd"), BW_OK);
    cr_assert_null(f.cstr(), "no room for the NUL");
    cr_assert_eq(f.error(), BW_OK, "a full fixed buffer's cstr records nothing");
}

Test(cpp_wrapper, detach_returns_the_block_to_the_pool)
{
    live_blocks = 0;
    bw::detached d;
    {
        bw::pool p = counted_pool();
        bw::writer w(p);
        cr_assert_eq(w.write("detached bytes"), BW_OK);
        d = w.detach();
        cr_assert(static_cast<bool>(d));
        cr_assert_eq(w.len(), 0u);
        cr_assert(d.view() == "detached bytes");
        cr_assert_geq(d.capacity(), d.size());
        cr_assert_eq(d.pool(), p.get());
        cr_assert_eq(p.stats().outstanding_bytes, d.capacity());
    } // the pool and the writer are gone; the block still holds the pool
    cr_assert_gt(live_blocks, 0);
    cr_assert_eq(d.data()[0], 'd');
    d.reset(); // returned, and the pool's last owner gone
    cr_assert(!d);
    cr_assert_eq(live_blocks, 0);

    bw::pool p = bw::pool::create();
    bw::writer w(p);
    w.write("raw");
    bw::detached r = w.detach();
    bw_pool *from = r.pool();
    size_t cap = r.capacity();
    void *block = r.release(); // now ours: back with bw_pool_return
    cr_assert(!r);
    cr_assert_eq(p.stats().outstanding_bytes, cap);
    bw_pool_return(from, block, cap);
    cr_assert_eq(p.stats().outstanding_bytes, 0u);

    char fx[8];
    bw::writer f = bw::writer::fixed(fx);
    f.write("x");
    cr_assert(!f.detach(), "a fixed writer's buffer is the caller's");
    cr_assert_eq(f.error(), BW_EINVAL);
}

#ifdef BW_HAVE_FILE_ADAPTER
Test(cpp_wrapper, fopen_writes_through_a_file)
{
    bw::writer w;
    {
        bw::file f = w.fopen();
        cr_assert(static_cast<bool>(f));
        cr_assert_gt(std::fprintf(f.get(), "%s=%d;", "n", 42), 0);
        cr_assert_eq(f.close(), 0);
        cr_assert(!f);
    }
    cr_assert(w.view() == "n=42;");
}
#endif

Test(cpp_wrapper, string_view_and_span_in_and_out)
{
    bw::writer w;
    std::string_view in("view in");
    cr_assert_eq(w.write(in), BW_OK);
    cr_assert_eq(w.patch(0, std::string_view("V")), BW_OK);
    std::optional<std::string_view> out = w.view();
    cr_assert(out && *out == "View in");
#ifdef BW__HPP_SPAN
    const std::byte raw[] = {std::byte{1}, std::byte{2}};
    cr_assert_eq(w.write(std::span<const std::byte>(raw)), BW_OK);
    std::optional<std::span<const std::byte>> bytes = w.bytes();
    cr_assert(bytes && bytes->size() == 9 && (*bytes)[8] == std::byte{2});
#endif
}

// The 0.3 calls: putc, detach_malloc (freed with free()), append_ref (done
// once when the bytes leave), move_from (relinked between segmented writers)
// and error_errno (the errno kept with BW_EIO).
static int cpp_done_calls;
static void cpp_done(void *ctx, const void *data, size_t n)
{
    (void)ctx;
    (void)data;
    cpp_done_calls += static_cast<int>(n);
}

static ptrdiff_t cpp_failing_sink(void *, const void *, size_t)
{
    errno = ENOSPC;
    return -1;
}

Test(cpp_wrapper, putc_detach_malloc_append_ref_move_and_errno)
{
    bw::writer body = bw::writer::chain();
    cr_assert_eq(body.putc('<'), BW_OK);
    static const char ref[] = "referenced";
    cpp_done_calls = 0;
    cr_assert_eq(body.append_ref(std::string_view(ref, 10), cpp_done), BW_OK);
    cr_assert_eq(cpp_done_calls, 0, "linked, not copied: done waits");
    cr_assert_eq(body.putc('>'), BW_OK);

    bw::writer head = bw::writer::chain();
    cr_assert_eq(head.write("head:"), BW_OK);
    cr_assert_eq(head.move_from(body), BW_OK);
    cr_assert_eq(body.len(), 0u);
    cr_assert_eq(head.len(), 17u);

    size_t n = 0;
    std::unique_ptr<char, bw::detail::free_delete> out = head.detach_malloc(&n);
    cr_assert(out != nullptr);
    cr_assert_eq(n, 17u);
    cr_assert_str_eq(out.get(), "head:<referenced>");
    cr_assert_eq(cpp_done_calls, 10, "done ran once the bytes left");
    cr_assert_eq(head.len(), 0u);

    bw::writer s = bw::writer::sink(cpp_failing_sink, nullptr, 64);
    cr_assert_eq(s.error_errno(), 0);
    cr_assert_eq(s.write(std::string(100, 'x')), BW_EIO);
    cr_assert_eq(s.error_errno(), ENOSPC);
    s.clear_error();
    cr_assert_eq(s.error_errno(), 0);
}

Test(cpp_wrapper, set_limit_caps_the_writer)
{
    bw::writer w;
    cr_assert_eq(w.set_limit(8), BW_OK);
    cr_assert_eq(w.write("12345678"), BW_OK);
    cr_assert_eq(w.putc('9'), BW_ELIMIT);
    cr_assert_eq(w.error(), BW_ELIMIT);
    cr_assert_eq(w.len(), 8u);
}

Test(cpp_wrapper, try_span_is_all_or_nothing)
{
    unsigned char buf[4];
    bw::writer w = bw::writer::fixed(buf, sizeof buf);
    cr_assert_null(w.try_span(5));
    cr_assert_eq(w.error(), BW_OK);
    cr_assert_not_null(w.try_span(4));
}

Test(cpp_wrapper, float_text_for_json_and_into_a_room)
{
    bw::writer w;
    cr_assert_eq(w.put_dec(3.0, BW_DEC_JSON_REAL), BW_OK);
    cr_assert_eq(w.putc(','), BW_OK);
    cr_assert_eq(w.put_dec(1e17f, BW_DEC_JSON), BW_OK);
    cr_assert_eq(w.put_dec(std::numeric_limits<double>::infinity(), BW_DEC_JSON), BW_ENONFINITE);
    cr_assert_eq(w.error(), BW_OK);
    std::optional<std::string_view> out = w.view();
    cr_assert(out && *out == "3.0,1e+17");
    char b[8];
    size_t n = 0;
    cr_assert_eq(bw::fmt_dec(b, 3, 0.125, 0, &n), BW_EFULL);
    cr_assert_eq(n, 5u);
    cr_assert_eq(bw::fmt_dec(b, 5, 0.125f, 0, &n), BW_OK);
    cr_assert(std::string_view(b, n) == "0.125");
}
