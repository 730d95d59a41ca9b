// SPDX-License-Identifier: MIT
// bufwriter.hpp - C++17 RAII wrappers over bufwriter.h: bw::writer and
// bw::pool. Move-only, no exceptions, no RTTI: every call returns the C API's
// int status (BW_OK or a negative BW_E* code, sticky on the writer as in C),
// and bufwriter.h stays the manual for what each call does.
//
//   bw::pool p = bw::pool::create();                 // defaults; p.status()
//   bw::writer w(p.get());                           // contiguous on p
//   w.put_u32le(0);                                  // length placeholder
//   w.write("hello, ");                              // std::string_view
//   w.printf("%s #%d", "world", 42);
//   w.patch_u32le(0, static_cast<uint32_t>(w.tell() - 4));
//   if (w.error() != BW_OK) std::fputs(bw_strerror(w.error()), stderr);
//   else std::fwrite(w.view().data(), 1, w.view().size(), stdout);
//   bw::writer f = bw::writer::fd(1);                // other modes: chain,
//   f.write(w.view()); f.flush();                    //   sink, fixed, buffer
//
// Destroy (or move away) every writer of a pool before the pool: declare the
// pool first. A FILE from bw_fopen(w.get()) points at the writer object:
// close it before that object is moved or destroyed. Needs C++17
// (std::string_view); the library, or the single header's implementation in
// one C11 file, provides the definitions.
#ifndef BUFWRITER_HPP
#define BUFWRITER_HPP

#include "bufwriter.h"

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>
#include <type_traits>

namespace bw {

namespace detail {
// A contiguous range of bytes: data() and size(), elements of one byte
// (std::string, std::vector<unsigned char>, std::array<std::byte, N>, a C
// array for fixed(), C++20 std::span<const std::byte>, ...).
template <class R, class = void> struct is_bytes : std::false_type {};
template <class R>
struct is_bytes<R, std::void_t<decltype(std::data(std::declval<R &>())),
                               decltype(std::size(std::declval<R &>()))>>
    : std::bool_constant<sizeof(*std::data(std::declval<R &>())) == 1> {};
} // namespace detail

// A pool (bw_pool_create / bw_pool_destroy). Default: holds none (get() is
// nullptr, which writers take as the shared pool).
class pool {
  public:
    pool() noexcept = default;
    // Create with opts (nullptr: every default); status() is what
    // bw_pool_create returned, and on failure the pool holds none.
    static pool create(const bw_pool_options *opts = nullptr) noexcept {
        pool p;
        p.status_ = bw_pool_create(&p.p_, opts);
        return p;
    }
    static pool create(const bw_pool_options &opts) noexcept { return create(&opts); }
    pool(pool &&o) noexcept : p_(o.p_), status_(o.status_) { o.p_ = nullptr; }
    pool &operator=(pool &&o) noexcept {
        if (this != &o) {
            bw_pool_destroy(p_);
            p_ = o.p_;
            status_ = o.status_;
            o.p_ = nullptr;
        }
        return *this;
    }
    pool(const pool &) = delete;
    pool &operator=(const pool &) = delete;
    ~pool() { bw_pool_destroy(p_); }

    bw_pool *get() const noexcept { return p_; }
    explicit operator bool() const noexcept { return p_ != nullptr; }
    int status() const noexcept { return status_; }
    bw_pool_stats stats() const noexcept {
        bw_pool_stats s{};
        bw_pool_get_stats(p_, &s);
        return s;
    }
    void trim() noexcept { bw_pool_trim(p_); }

  private:
    bw_pool *p_ = nullptr;
    int status_ = BW_OK;
};

// A writer (a bw_writer it owns; bw_release on destruction). A failed
// init is recorded like any error: check error() (or flush()) once.
class writer {
  public:
    // Contiguous on the shared pool, nothing allocated (BW_WRITER_INIT).
    writer() noexcept : w_() {}
    // Contiguous on p (nullptr = shared), initial_capacity as bw_init.
    explicit writer(bw_pool *p, size_t initial_capacity = 0) noexcept : w_() {
        bw_init(&w_, p, initial_capacity);
    }
    static writer contiguous(bw_pool *p = nullptr, size_t initial_capacity = 0) noexcept {
        return writer(p, initial_capacity);
    }
    // Contiguous, starting in the caller's buffer (bw_init_buffer).
    static writer buffer(void *buf, size_t size, bw_pool *p = nullptr) noexcept {
        writer w;
        bw_init_buffer(&w.w_, p, buf, size);
        return w;
    }
    static writer chain(bw_pool *p = nullptr) noexcept {
        writer w;
        bw_init_chain(&w.w_, p);
        return w;
    }
    static writer sink(bw_sink_fn fn, void *ctx, size_t buffer_size = 0,
                       bw_pool *p = nullptr) noexcept {
        writer w;
        bw_init_sink(&w.w_, p, buffer_size, fn, ctx);
        return w;
    }
    static writer fd(int fd, size_t buffer_size = 0, bw_pool *p = nullptr) noexcept {
        writer w;
        bw_init_fd(&w.w_, p, buffer_size, fd);
        return w;
    }
    static writer fixed(void *buf, size_t size) noexcept {
        writer w;
        bw_init_fixed(&w.w_, buf, size);
        return w;
    }
    template <class R, std::enable_if_t<detail::is_bytes<R>::value, int> = 0>
    static writer fixed(R &bytes) noexcept {
        return fixed(std::data(bytes), std::size(bytes));
    }

    // Moving copies the struct, and the source becomes an empty contiguous
    // writer (what BW_WRITER_INIT gives; releasing it is a no-op). That is
    // safe because a bw_writer holds no pointer to itself: data points into
    // a pooled block or the caller's buffer, a segmented writer's links live
    // in its blocks, and pool/ctx are the caller's; nothing the library keeps
    // refers back to the struct (except a FILE from bw_fopen, see the top).
    writer(writer &&o) noexcept : w_(o.w_) { o.w_ = bw_writer(); }
    writer &operator=(writer &&o) noexcept {
        if (this != &o) {
            bw_release(&w_);
            w_ = o.w_;
            o.w_ = bw_writer();
        }
        return *this;
    }
    writer(const writer &) = delete;
    writer &operator=(const writer &) = delete;
    ~writer() { bw_release(&w_); }

    bw_writer *get() noexcept { return &w_; }
    const bw_writer *get() const noexcept { return &w_; }

    // Writing (section 7 of bufwriter.h).
    int write(const void *src, size_t n) noexcept { return bw_write(&w_, src, n); }
    int write(std::string_view s) noexcept { return bw_write(&w_, s.data(), s.size()); }
    // A range of bytes (text goes through string_view: no NUL from "...").
    template <class R, std::enable_if_t<detail::is_bytes<const R>::value &&
                                            !std::is_convertible_v<const R &, std::string_view>,
                                        int> = 0>
    int write(const R &bytes) noexcept {
        return bw_write(&w_, std::data(bytes), std::size(bytes));
    }
#if defined(__GNUC__) || defined(__clang__)
    __attribute__((format(printf, 2, 3)))
#endif
    int printf(const char *fmt, ...) noexcept {
        va_list ap;
        va_start(ap, fmt);
        int rc = bw_vprintf(&w_, fmt, ap);
        va_end(ap);
        return rc;
    }
    int vprintf(const char *fmt, va_list ap) noexcept { return bw_vprintf(&w_, fmt, ap); }
    template <class T> int put_dec(T v) noexcept {
        static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>, "an integer");
        if constexpr (std::is_signed_v<T>) return bw_put_dec_i64(&w_, v);
        else return bw_put_dec_u64(&w_, v);
    }
    int put_hex(const void *src, size_t n) noexcept { return bw_put_hex(&w_, src, n); }
    int put_uvarint(uint64_t v) noexcept { return bw_put_uvarint(&w_, v); }
    int put_svarint(int64_t v) noexcept { return bw_put_svarint(&w_, v); }
    int reserve(size_t n) noexcept { return bw_reserve(&w_, n); }
    void *get_span(size_t size_hint, size_t *avail) noexcept {
        return bw_get_span(&w_, size_hint, avail);
    }
    int advance(size_t n) noexcept { return bw_advance(&w_, n); }

    // put_u8 .. put_f64be and patch_u8 .. patch_f64be, as bw_put_* and
    // bw_patch_* (sections 7 and 8).
#define BW_HPP_TYPED(name, type)                                               \
    int put_##name(type v) noexcept { return bw_put_##name(&w_, v); }         \
    int patch_##name(uint64_t pos, type v) noexcept { return bw_patch_##name(&w_, pos, v); }
    BW_HPP_TYPED(u8, uint8_t)
    BW_HPP_TYPED(u16le, uint16_t) BW_HPP_TYPED(u32le, uint32_t) BW_HPP_TYPED(u64le, uint64_t)
    BW_HPP_TYPED(u16be, uint16_t) BW_HPP_TYPED(u32be, uint32_t) BW_HPP_TYPED(u64be, uint64_t)
    BW_HPP_TYPED(i16le, int16_t)  BW_HPP_TYPED(i32le, int32_t)  BW_HPP_TYPED(i64le, int64_t)
    BW_HPP_TYPED(i16be, int16_t)  BW_HPP_TYPED(i32be, int32_t)  BW_HPP_TYPED(i64be, int64_t)
    BW_HPP_TYPED(f32le, float)    BW_HPP_TYPED(f64le, double)
    BW_HPP_TYPED(f32be, float)    BW_HPP_TYPED(f64be, double)
#undef BW_HPP_TYPED

    // Positions (section 8).
    uint64_t tell() const noexcept { return bw_tell(&w_); }
    int patch(uint64_t pos, const void *src, size_t n) noexcept {
        return bw_patch(&w_, pos, src, n);
    }
    int patch(uint64_t pos, std::string_view s) noexcept {
        return bw_patch(&w_, pos, s.data(), s.size());
    }
    int truncate(uint64_t pos) noexcept { return bw_truncate(&w_, pos); }

    // State (section 6). release() is bw_release (blocks back to the pool,
    // writer empty and reusable), not a hand-over of ownership.
    int flush() noexcept { return bw_flush(&w_); }
    int error() const noexcept { return bw_error(&w_); }
    void clear_error() noexcept { bw_clear_error(&w_); }
    void clear() noexcept { bw_clear(&w_); }
    void release() noexcept { bw_release(&w_); }
    bw_pool *get_pool() const noexcept { return bw_writer_pool(&w_); }

    // Reading out (section 9). view(): the held bytes when they lie in one
    // block (contiguous, fixed, streaming, a one-block chain), else empty;
    // valid until the next call that can grow or move them.
    size_t len() const noexcept { return bw_len(&w_); }
    const unsigned char *data() const noexcept { return bw_data(&w_); }
    std::string_view view() const noexcept {
        const unsigned char *p = bw_data(&w_);
        return p != nullptr ? std::string_view(reinterpret_cast<const char *>(p), bw_len(&w_))
                            : std::string_view();
    }
    // bw_pullup as a view: every held byte, made contiguous (empty on failure).
    std::string_view pullup() noexcept {
        const unsigned char *p = bw_pullup(&w_);
        return p != nullptr ? std::string_view(reinterpret_cast<const char *>(p), bw_len(&w_))
                            : std::string_view();
    }
    int copy_out(size_t offset, void *dst, size_t n) const noexcept {
        return bw_copy_out(&w_, offset, dst, n);
    }
    int consume(size_t n) noexcept { return bw_consume(&w_, n); }
    int write_fd(int fd, size_t *written = nullptr) noexcept {
        return bw_write_fd(&w_, fd, written);
    }

  private:
    bw_writer w_;
};

} // namespace bw

#endif // BUFWRITER_HPP
