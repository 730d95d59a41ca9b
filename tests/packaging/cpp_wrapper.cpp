// SPDX-License-Identifier: MIT
// cpp_wrapper.cpp - bufwriter.hpp, self-checking: bw::pool and bw::writer in
// every writer mode (contiguous, caller's first buffer, segmented, sink, fd,
// fixed), moves of both, and errors as the C API reports them. Returns
// non-zero on failure. Built by tests/packaging/run.sh with g++ and clang++
// at -std=c++17 and the strict warning set, against the single header (the
// implementation in a C unit, impl.c) and against the staged install.
#include "bufwriter.hpp"

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

static int failures;

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            std::fprintf(stderr, "cpp_wrapper: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
            failures++;                                                              \
        }                                                                            \
    } while (false)

static std::string_view sv(const char *s, size_t n) { return std::string_view(s, n); }

// A backing allocator that counts live blocks, to see pools give back all.
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

// A sink that appends to a std::string, or fails with ENOSPC when asked.
struct collector {
    std::string out;
    bool fail = false;
};
static ptrdiff_t collect(void *ctx, const void *data, size_t n) {
    collector *c = static_cast<collector *>(ctx);
    if (c->fail) {
        errno = ENOSPC;
        return -1;
    }
    c->out.append(static_cast<const char *>(data), n);
    return static_cast<ptrdiff_t>(n);
}

static void contiguous() {
    bw::writer w; // shared pool, nothing allocated
    CHECK(w.len() == 0 && w.data() == nullptr && w.view() == "");
    CHECK(w.get_pool() == bw_pool_shared());
    CHECK(w.put_u32le(0) == BW_OK);
    CHECK(w.write("hello, ") == BW_OK); // a string_view: no NUL
    CHECK(w.printf("%s #%d", "world", 42) == BW_OK);
    CHECK(w.put_uvarint(300) == BW_OK);
    CHECK(w.patch_u32le(0, static_cast<uint32_t>(w.tell() - 4)) == BW_OK);
    CHECK(w.view() == sv("\x12\0\0\0hello, world #42\xac\x02", 22));

    w.clear();
    CHECK(w.len() == 0 && w.error() == BW_OK);
    w.put_u8(1);
    w.put_u16be(0x0203);
    w.put_i32le(-2);
    w.put_f64be(1.0);
    w.put_svarint(-1);
    w.put_dec(-12);
    w.put_dec(18446744073709551615ull);
    w.put_dec(static_cast<unsigned char>(7));
    w.put_dec(0.1);
    w.put_dec(1.1f);
    w.put_hex("\xab\x01", 2);
    w.write("raw", 3);
    w.write(std::vector<unsigned char>{4, 5});
    w.write(std::array<std::byte, 2>{std::byte{6}, std::byte{7}});
    w.write(std::string("str"));
    const unsigned char arr[2] = {8, 9};
    w.write(arr);
    CHECK(w.error() == BW_OK);
    CHECK(w.view() == sv("\x01\x02\x03\xfe\xff\xff\xff\x3f\xf0\0\0\0\0\0\0\x01"
                         "-1218446744073709551615" "7" "0.1" "1.1" "ab01"
                         "raw\x04\x05\x06\x07str\x08\x09",
                         16 + 23 + 1 + 3 + 3 + 4 + 3 + 4 + 3 + 2));
    uint64_t mark = w.tell();
    w.write(std::string_view("undo"));
    CHECK(w.truncate(mark) == BW_OK && w.tell() == mark);
    CHECK(w.patch(0, std::string_view("\x11")) == BW_OK && w.data()[0] == 0x11);

    size_t room = 0;
    char *p = static_cast<char *>(w.get_span(4, &room));
    CHECK(p != nullptr && room >= 4);
    if (p != nullptr) std::memcpy(p, "span", 4);
    CHECK(w.advance(4) == BW_OK && w.view()->substr(w.len() - 4) == "span");

    // errors: the C codes, sticky until clear_error
    CHECK(w.patch(w.tell(), "xy", 2) == BW_EINVAL && w.error() == BW_EINVAL);
    CHECK(w.put_u8(1) == BW_EINVAL && w.flush() == BW_EINVAL);
    w.clear_error();
    CHECK(w.error() == BW_OK && w.put_u8(1) == BW_OK);
    w.release();
    CHECK(w.len() == 0 && w.tell() == 0 && w.data() == nullptr);
}

static void pools_and_buffers() {
    bw::pool bad;
    CHECK(!bad && bad.get() == nullptr && bad.status() == BW_OK);
    bw_pool_options o{};
    o.min_block_size = 24; // not a power of two
    bad = bw::pool::create(o);
    CHECK(!bad && bad.get() == nullptr && bad.status() == BW_EINVAL);

    live_blocks = 0;
    o = bw_pool_options{};
    o.allocator = &counting;
    o.flags = BW_POOL_NO_THREAD_CACHE;
    bw::pool p = bw::pool::create(o);
    CHECK(p && p.status() == BW_OK);
    {
        bw::writer w(p, 100);
        CHECK(w.error() == BW_OK && w.get_pool() == p.get() && w.view() == "");
        for (uint32_t i = 0; i < 10000; i++) w.put_u32be(i);
        CHECK(w.len() == 40000 && w.view()->size() == 40000 && w.error() == BW_OK);
        CHECK(p.stats().outstanding_bytes >= 40000);

        // contiguous, starting in a buffer of ours
        unsigned char first[16];
        bw::writer b = bw::writer::buffer(first, sizeof first, p);
        b.write(std::string_view("12345678"));
        CHECK(b.data() == first && b.view() == "12345678");
        b.write(std::string(100, 'z'));
        CHECK(b.data() != first && b.len() == 108 && b.view()->substr(0, 9) == "12345678z");
        CHECK(bw::writer::buffer(nullptr, 4).error() == BW_EINVAL);
        bw::writer c = bw::writer::contiguous(p, 0);
        CHECK(c.get_pool() == p.get() && c.error() == BW_OK);
    }
    CHECK(p.stats().outstanding_bytes == 0 && p.stats().rents >= 2);
    CHECK(live_blocks > 0); // retained by the pool

    // moves: the pool goes with the object; assignment destroys the old one
    bw_pool *raw = p.get();
    bw::pool q(std::move(p));
    CHECK(q.get() == raw && !p && p.get() == nullptr);
    q = bw::pool::create();
    CHECK(q && q.get() != raw && live_blocks == 0); // old pool destroyed (no writer left)
    p = std::move(q);
    CHECK(p && !q);
    p.trim();
}

static void chain() {
    bw::pool p = bw::pool::create();
    bw::writer w = bw::writer::chain(p);
    std::string want;
    for (int i = 0; i < 3; i++) {
        std::string part(5000, static_cast<char>('a' + i));
        CHECK(w.write(part) == BW_OK);
        want += part;
    }
    CHECK(w.len() == 15000 && w.data() == nullptr); // spans blocks
    char mid[4];
    CHECK(w.copy_out(4998, mid, 4) == BW_OK && std::memcmp(mid, "aabb", 4) == 0);
    CHECK(w.copy_out(14999, mid, 2) == BW_EINVAL);
    bw::writer moved(std::move(w)); // links live in the blocks: still intact
    CHECK(w.len() == 0 && w.error() == BW_OK);
    CHECK(moved.consume(1000) == BW_OK);
    CHECK(moved.data() == nullptr);                              // still spans blocks
    CHECK(moved.view() == std::string_view(want).substr(1000)); // pulled up
    CHECK(moved.data() != nullptr);
}

static void sink() {
    bw::pool p = bw::pool::create();
    collector c;
    bw::writer w = bw::writer::sink(collect, &c, 64, p);
    CHECK(w.error() == BW_OK);
    std::string want;
    for (int i = 0; i < 50; i++) {
        w.printf("line %d\n", i);
        want += "line " + std::to_string(i) + "\n";
    }
    CHECK(!c.out.empty() && c.out.size() < want.size()); // the buffer was sent
    bw::writer m;
    m = std::move(w); // held bytes move with it
    CHECK(m.flush() == BW_OK && c.out == want && m.len() == 0 && m.tell() == want.size());
    c.fail = true;
    m.write(std::string_view("lost?"));
    CHECK(m.flush() == BW_EIO && errno == ENOSPC && m.error() == BW_EIO);
    CHECK(m.write(std::string_view("x")) == BW_EIO); // sticky
    c.fail = false;
    m.clear_error();
    CHECK(m.flush() == BW_OK && c.out == want + "lost?");
    CHECK(bw::writer::sink(nullptr, nullptr).error() == BW_EINVAL);
}

static void fd() {
    int pfd[2];
    CHECK(pipe(pfd) == 0);
    {
        bw::writer w = bw::writer::fd(pfd[1], 0);
        w.write(std::string_view("to the pipe\n"));
        w.put_u16le(0x0a41);
        CHECK(w.flush() == BW_OK && w.len() == 0);
    }
    char buf[32] = {};
    CHECK(read(pfd[0], buf, sizeof buf) == 14 && std::memcmp(buf, "to the pipe\nA\n", 14) == 0);
    // a segmented writer sent with writev
    bw::writer s = bw::writer::chain();
    s.write(std::string_view("via write_fd"));
    size_t sent = 0;
    CHECK(s.write_fd(pfd[1], &sent) == BW_OK && sent == 12 && s.len() == 0);
    CHECK(read(pfd[0], buf, sizeof buf) == 12 && std::memcmp(buf, "via write_fd", 12) == 0);
    close(pfd[0]);
    close(pfd[1]);
    CHECK(bw::writer::fd(-1).error() == BW_EINVAL);
}

static void fixed() {
    char buf[8];
    bw::writer w = bw::writer::fixed(buf); // a C array: its size
    CHECK(w.get_pool() == nullptr);
    CHECK(w.write(std::string_view("12345678")) == BW_OK); // fits exactly
    CHECK(w.put_u8(1) == BW_EFULL && w.error() == BW_EFULL);
    CHECK(w.write(std::string_view("x")) == BW_EFULL); // sticky
    CHECK(w.view() == "12345678" && w.data() == reinterpret_cast<unsigned char *>(buf));
    bw::writer m(std::move(w)); // still the caller's buffer, error moved too
    CHECK(m.error() == BW_EFULL && m.view() == "12345678" && w.error() == BW_OK);
    m.clear_error();
    m.clear();
    CHECK(m.put_u32be(0x41424344) == BW_OK && m.view() == "ABCD");

    std::array<unsigned char, 4> a{};
    bw::writer f = bw::writer::fixed(a);
    CHECK(f.printf("%d", 12345) == BW_EFULL && f.len() == 0); // nothing partial
    f.clear_error();
    CHECK(f.printf("%d", 1234) == BW_OK && std::memcmp(a.data(), "1234", 4) == 0);
    CHECK(bw::writer::fixed(nullptr, 4).error() == BW_EINVAL);
    CHECK(bw::writer::fixed(nullptr, 0).put_u8(1) == BW_EFULL);
}

static void moves() {
    bw::pool p = bw::pool::create();
    bw::writer a(p);
    a.write(std::string_view("abc"));
    const unsigned char *d = a.data();
    bw::writer b(std::move(a)); // the block moves, no copy
    CHECK(b.data() == d && b.view() == "abc");
    CHECK(a.len() == 0 && a.tell() == 0 && a.error() == BW_OK && a.data() == nullptr);
    CHECK(a.write(std::string_view("z")) == BW_OK && a.view() == "z"); // still usable
    CHECK(a.get_pool() == bw_pool_shared()); // an empty writer on the shared pool

    bw::writer c(p);
    c.write(std::string(3000, 'c'));
    size_t before = p.stats().outstanding_bytes;
    b = std::move(c); // b's block goes back to the pool
    CHECK(p.stats().outstanding_bytes < before);
    CHECK(b.len() == 3000 && c.len() == 0 && c.data() == nullptr);
    bw::writer &alias = b;
    b = std::move(alias); // self-move: a no-op
    CHECK(b.len() == 3000 && b.error() == BW_OK);
    b = bw::writer();
    c = bw::writer();
    CHECK(p.stats().outstanding_bytes == 0);
}

// C++20: std::span in (any contiguous range of bytes) and out (bytes()).
static bool spans() {
#ifdef BW__HPP_SPAN
    bw::writer w = bw::writer::chain();
    std::array<std::byte, 3000> block{};
    block.back() = std::byte{9};
    for (int i = 0; i < 3; i++) CHECK(w.write(std::span<const std::byte>(block)) == BW_OK);
    std::optional<std::span<const std::byte>> out = w.bytes(); // pulled up
    CHECK(out && out->size() == 9000 && (*out)[8999] == std::byte{9});
    return true;
#else
    return false;
#endif
}

int main() {
    bool span_checked = spans();
    contiguous();
    pools_and_buffers();
    chain();
    sink();
    fd();
    fixed();
    moves();
    if (failures != 0) {
        std::fprintf(stderr, "cpp_wrapper: %d checks failed\n", failures);
        return 1;
    }
    std::printf("cpp_wrapper: all checks passed (bufwriter %s)%s\n", bw_version(),
                span_checked ? ", std::span checked" : "");
    return 0;
}
