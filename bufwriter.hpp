// SPDX-License-Identifier: MIT
// bufwriter.hpp - C++17 RAII wrappers over bufwriter.h: bw::pool, bw::writer,
// bw::detached (a block handed out by detach) and bw::file (bw_fopen).
// Move-only, no exceptions, no RTTI: every call returns the C API's int
// status (BW_OK or a negative BW_E* code, sticky on the writer as in C), and
// bufwriter.h stays the manual for what each call does.
//
//   bw::pool p = bw::pool::create();                 // defaults; p.status()
//   bw::writer w(p);                                 // contiguous on p
//   w.put_u32le(0);                                  // length placeholder
//   w.write("hello, ");                              // std::string_view
//   w.printf("%s #%d", "world", 42);
//   w.patch_u32le(0, static_cast<uint32_t>(w.tell() - 4));
//   auto v = w.view();                               // every held byte
//   if (!v) std::fputs(bw_strerror(w.error()), stderr);
//   else std::fwrite(v->data(), 1, v->size(), stdout);
//   bw::writer f = bw::writer::fd(1);                // other modes: chain,
//   f.write(*w.view()); f.flush();                   //   sink, fixed, buffer
//
// Lifetimes. A writer made from a bw::pool shares the ownership of that
// pool: the pool is destroyed when the last of the bw::pool object, the
// writers made from it and their detached blocks is gone, so declaring the
// pool after the writer, or moving a writer out of the pool's scope, is
// safe. Writers take a bw::pool, never a raw bw_pool * (that does not
// compile); a pool made elsewhere in C is wrapped with bw::pool::borrow,
// whose caller keeps it alive. A FILE from fopen() points at the writer
// object: close it before that object is moved or destroyed.
//
// Needs C++17 (std::string_view, std::optional); std::span in and out under
// C++20. The library, or the single header's implementation in one C11
// file, provides the definitions.
#ifndef BUFWRITER_HPP
#define BUFWRITER_HPP

#if !defined(__cplusplus)
#  error "bufwriter.hpp is the C++ wrapper: C code includes bufwriter.h"
#elif (defined(_MSVC_LANG) ? _MSVC_LANG : __cplusplus) < 201703L
#  error "bufwriter.hpp needs C++17 or later (-std=c++17); C++11 and C++14 code can use bufwriter.h"
#else // the rest only where it can compile: the #error is the one message

#include "bufwriter.h"

#include <atomic>
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <memory>
#include <new>
#include <optional>
#include <string_view>
#include <type_traits>
#if __has_include(<version>)
#  include <version>
#endif
#if defined(__cpp_lib_span) && __cpp_lib_span >= 202002L
#  include <span>
#  define BW__HPP_SPAN 1
#endif

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

// The shared ownership of one pool: a count the bw::pool object, every
// writer made from it and every detached block hold. Not part of the API.
struct pool_box {
    bw_pool *pool;
    bool owned; // false: bw::pool::borrow, the caller destroys it
    std::atomic<long> refs;
};
inline pool_box *box_ref(pool_box *b) noexcept {
    if (b != nullptr) b->refs.fetch_add(1, std::memory_order_relaxed);
    return b;
}
inline void box_unref(pool_box *b) noexcept {
    if (b != nullptr && b->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        if (b->owned) bw_pool_destroy(b->pool);
        delete b;
    }
}
// Frees what bw_detach_malloc handed over.
struct free_delete {
    void operator()(void *p) const noexcept { std::free(p); }
};
} // namespace detail

// bw_fmt_dec_f64 / bw_fmt_dec_f32 (by v's type): the text into room bytes
// at dst, *len its length; BW_EFULL, nothing stored, when it does not fit.
template <class T>
inline int fmt_dec(void *dst, size_t room, T v, unsigned flags, size_t *len) noexcept {
    static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "a float or a double");
    if constexpr (std::is_same_v<T, float>) return bw_fmt_dec_f32(dst, room, v, flags, len);
    else return bw_fmt_dec_f64(dst, room, v, flags, len);
}

class writer;
class detached;

// A pool (bw_pool_create; bw_pool_destroy when the last owner is gone: this
// object, the writers made from it, their detached blocks). Default: holds
// none (get() is nullptr, which writers take as the shared pool).
class pool {
  public:
    pool() noexcept = default;
    // Create with opts (nullptr: every default); status() is what
    // bw_pool_create returned (BW_ENOMEM also when the ownership count
    // cannot be allocated), and on failure the pool holds none.
    static pool create(const bw_pool_options *opts = nullptr) noexcept {
        pool p;
        bw_pool *raw = nullptr;
        p.status_ = bw_pool_create(&raw, opts);
        if (p.status_ == BW_OK) p.adopt(raw, true);
        return p;
    }
    static pool create(const bw_pool_options &opts) noexcept { return create(&opts); }
    // A pool made elsewhere (C code, bw_pool_shared()): writers may use it,
    // nothing here destroys it, and the caller keeps it alive while any
    // writer made from it or any detached block of it lives.
    static pool borrow(bw_pool *raw) noexcept {
        pool p;
        if (raw != nullptr) p.adopt(raw, false);
        return p;
    }
    pool(pool &&o) noexcept : box_(o.box_), status_(o.status_) { o.box_ = nullptr; }
    pool &operator=(pool &&o) noexcept {
        if (this != &o) {
            detail::box_unref(box_);
            box_ = o.box_;
            status_ = o.status_;
            o.box_ = nullptr;
        }
        return *this;
    }
    pool(const pool &) = delete;
    pool &operator=(const pool &) = delete;
    ~pool() { detail::box_unref(box_); }

    bw_pool *get() const noexcept { return box_ != nullptr ? box_->pool : nullptr; }
    explicit operator bool() const noexcept { return box_ != nullptr; }
    int status() const noexcept { return status_; }
    bw_pool_stats stats() const noexcept {
        bw_pool_stats s{};
        bw_pool_get_stats(get(), &s);
        return s;
    }
    void trim() noexcept { bw_pool_trim(get()); }

  private:
    friend class writer;
    void adopt(bw_pool *raw, bool owned) noexcept {
        box_ = new (std::nothrow) detail::pool_box{raw, owned, {1}};
        if (box_ == nullptr) {
            if (owned) bw_pool_destroy(raw);
            status_ = BW_ENOMEM;
        }
    }
    detail::pool_box *box_ = nullptr;
    int status_ = BW_OK;
};

// A block handed out by writer::detach: the bytes, and the matching
// release: bw_pool_return to the writer's pool (which it keeps alive) when
// it is destroyed or reset(). release() hands the block over raw instead
// (give it back with bw_pool_return(pool(), block, capacity), not free()).
class detached {
  public:
    detached() noexcept = default;
    detached(detached &&o) noexcept
        : block_(o.block_), len_(o.len_), cap_(o.cap_), pool_(o.pool_), box_(o.box_) {
        o.block_ = nullptr;
        o.len_ = o.cap_ = 0;
        o.box_ = nullptr;
    }
    detached &operator=(detached &&o) noexcept {
        if (this != &o) {
            reset();
            block_ = o.block_;
            len_ = o.len_;
            cap_ = o.cap_;
            pool_ = o.pool_;
            box_ = o.box_;
            o.block_ = nullptr;
            o.len_ = o.cap_ = 0;
            o.box_ = nullptr;
        }
        return *this;
    }
    detached(const detached &) = delete;
    detached &operator=(const detached &) = delete;
    ~detached() { reset(); }

    explicit operator bool() const noexcept { return block_ != nullptr; }
    unsigned char *data() const noexcept { return static_cast<unsigned char *>(block_); }
    size_t size() const noexcept { return len_; }
    size_t capacity() const noexcept { return cap_; }
    bw_pool *pool() const noexcept { return pool_; }
    std::string_view view() const noexcept {
        return block_ != nullptr ? std::string_view(static_cast<const char *>(block_), len_)
                                 : std::string_view();
    }
#ifdef BW__HPP_SPAN
    std::span<const std::byte> bytes() const noexcept {
        return {static_cast<const std::byte *>(block_), len_};
    }
#endif
    // Give the block back to its pool now (a no-op when empty).
    void reset() noexcept {
        if (block_ != nullptr) bw_pool_return(pool_, block_, cap_);
        block_ = nullptr;
        len_ = cap_ = 0;
        detail::box_unref(box_);
        box_ = nullptr;
    }
    // Hand the block over: the caller returns it to pool() (read pool()
    // first: this object is empty after).
    void *release() noexcept {
        void *b = block_;
        block_ = nullptr;
        len_ = cap_ = 0;
        detail::box_unref(box_);
        box_ = nullptr;
        return b;
    }

  private:
    friend class writer;
    void *block_ = nullptr;
    size_t len_ = 0, cap_ = 0;
    bw_pool *pool_ = nullptr;
    detail::pool_box *box_ = nullptr;
};

#ifdef BW_HAVE_FILE_ADAPTER
// A FILE * over a writer (bw_fopen), closed by the destructor. Close (or
// destroy) it before the writer object is moved or destroyed.
class file {
  public:
    file() noexcept = default;
    explicit file(FILE *f) noexcept : f_(f) {}
    file(file &&o) noexcept : f_(o.f_) { o.f_ = nullptr; }
    file &operator=(file &&o) noexcept {
        if (this != &o) {
            close();
            f_ = o.f_;
            o.f_ = nullptr;
        }
        return *this;
    }
    file(const file &) = delete;
    file &operator=(const file &) = delete;
    ~file() { close(); }
    FILE *get() const noexcept { return f_; }
    explicit operator bool() const noexcept { return f_ != nullptr; }
    // fclose's result (0, or EOF when the last bytes could not be handed
    // over); 0 when there is none.
    int close() noexcept {
        int rc = f_ != nullptr ? std::fclose(f_) : 0;
        f_ = nullptr;
        return rc;
    }

  private:
    FILE *f_ = nullptr;
};
#endif

// A writer (a bw_writer it owns; bw_release on destruction, then its share
// of the pool). A failed init is recorded like any error: check error() (or
// flush()) once. Every pool argument is a bw::pool (default: none, the
// shared pool); the writer shares its ownership.
class writer {
  public:
    // Contiguous on the shared pool, nothing allocated (BW_WRITER_INIT).
    writer() noexcept : w_() {}
    // Contiguous on p, initial_capacity as bw_init.
    explicit writer(const pool &p, size_t initial_capacity = 0) noexcept
        : w_(), box_(detail::box_ref(p.box_)) {
        bw_init(&w_, p.get(), initial_capacity);
    }
    static writer contiguous(const pool &p = pool(), size_t initial_capacity = 0) noexcept {
        return writer(p, initial_capacity);
    }
    // Contiguous, starting in the caller's buffer (bw_init_buffer).
    static writer buffer(void *buf, size_t size, const pool &p = pool()) noexcept {
        writer w(p, share);
        bw_init_buffer(&w.w_, p.get(), buf, size);
        return w;
    }
    static writer chain(const pool &p = pool()) noexcept {
        writer w(p, share);
        bw_init_chain(&w.w_, p.get());
        return w;
    }
    static writer sink(bw_sink_fn fn, void *ctx, size_t buffer_size = 0,
                       const pool &p = pool()) noexcept {
        writer w(p, share);
        bw_init_sink(&w.w_, p.get(), buffer_size, fn, ctx);
        return w;
    }
    static writer fd(int fd, size_t buffer_size = 0, const pool &p = pool()) noexcept {
        writer w(p, share);
        bw_init_fd(&w.w_, p.get(), buffer_size, fd);
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
    // writer on the shared pool (what BW_WRITER_INIT gives; releasing it is
    // a no-op). That is safe because a bw_writer holds no pointer to itself:
    // data points into a pooled block or the caller's buffer, a segmented
    // writer's links live in its blocks, and pool/ctx are the caller's;
    // nothing the library keeps refers back to the struct (except a FILE
    // from bw_fopen, see the top). The share of the pool moves along.
    writer(writer &&o) noexcept : w_(o.w_), box_(o.box_) {
        o.w_ = bw_writer();
        o.box_ = nullptr;
    }
    writer &operator=(writer &&o) noexcept {
        if (this != &o) {
            bw_release(&w_);
            detail::box_unref(box_);
            w_ = o.w_;
            box_ = o.box_;
            o.w_ = bw_writer();
            o.box_ = nullptr;
        }
        return *this;
    }
    writer(const writer &) = delete;
    writer &operator=(const writer &) = delete;
    ~writer() {
        bw_release(&w_); // blocks back to the pool, which is still alive
        detail::box_unref(box_);
    }

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
    // Decimal text: bw_put_dec_i64 / _u64 for an integer; for a double
    // bw_put_dec_f64 and for a float bw_put_dec_f32 (the float's own shortest
    // digits: 1.1f is "1.1"). No long double: its digits would be a double's.
    template <class T> int put_dec(T v) noexcept {
        static_assert((std::is_integral_v<T> && !std::is_same_v<T, bool>) ||
                          std::is_same_v<T, float> || std::is_same_v<T, double>,
                      "an integer, a float or a double");
        if constexpr (std::is_same_v<T, float>) return bw_put_dec_f32(&w_, v);
        else if constexpr (std::is_same_v<T, double>) return bw_put_dec_f64(&w_, v);
        else if constexpr (std::is_signed_v<T>) return bw_put_dec_i64(&w_, v);
        else return bw_put_dec_u64(&w_, v);
    }
    // With flags (BW_DEC_JSON, BW_DEC_JSON_REAL, ...): bw_put_dec_f64_flags
    // for a double, bw_put_dec_f32_flags for a float; BW_ENONFINITE, not
    // recorded, for a NaN or an infinity under BW_DEC_JSON.
    template <class T> int put_dec(T v, unsigned flags) noexcept {
        static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>,
                      "a float or a double");
        if constexpr (std::is_same_v<T, float>) return bw_put_dec_f32_flags(&w_, v, flags);
        else return bw_put_dec_f64_flags(&w_, v, flags);
    }
    // bw_putc: one byte, (unsigned char)c. In parentheses: <stdio.h> may
    // define putc as a macro.
    int (putc)(int c) noexcept { return bw_putc(&w_, c); }
    int put_hex(const void *src, size_t n) noexcept { return bw_put_hex(&w_, src, n); }
    // bw_pad: zeros up to the next multiple of align (a power of two <= BW_PAD_MAX).
    int pad(size_t align) noexcept { return bw_pad(&w_, align); }
    int put_uvarint(uint64_t v) noexcept { return bw_put_uvarint(&w_, v); }
    int put_svarint(int64_t v) noexcept { return bw_put_svarint(&w_, v); }
    int reserve(size_t n) noexcept { return bw_reserve(&w_, n); }
    void *get_span(size_t size_hint, size_t *avail) noexcept {
        return bw_get_span(&w_, size_hint, avail);
    }
    int advance(size_t n) noexcept { return bw_advance(&w_, n); }
    // bw_try_span: n free bytes now, or nullptr with no effect at all.
    void *try_span(size_t n) noexcept { return bw_try_span(&w_, n); }

    // put_u8 .. put_f64be and patch_u8 .. patch_f64be, as bw_put_* and
    // bw_patch_* (sections 7 and 8): one of each for every row of the C
    // header's type list, BW__TYPES.
#define BW_HPP_TYPED(name, type, size)                                         \
    int put_##name(type v) noexcept { return bw_put_##name(&w_, v); }         \
    int patch_##name(uint64_t pos, type v) noexcept { return bw_patch_##name(&w_, pos, v); }
    BW__TYPES(BW_HPP_TYPED)
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
    // bw_errno: the errno recorded with the current error (BW_EIO), else 0.
    // (errno itself is a macro, hence the name.)
    int error_errno() const noexcept { return bw_errno(&w_); }
    void clear_error() noexcept { bw_clear_error(&w_); }
    // bw_set_limit: no call takes tell() past max_bytes (0: none); one that
    // would fails with BW_ELIMIT, writing nothing.
    int set_limit(uint64_t max_bytes) noexcept { return bw_set_limit(&w_, max_bytes); }
    void clear() noexcept { bw_clear(&w_); }
    void release() noexcept { bw_release(&w_); }
    bw_pool *get_pool() const noexcept { return bw_writer_pool(&w_); }

    // Reading out (section 9). view(): every held byte as one view, in
    // every mode; a segmented writer whose bytes span blocks is pulled up
    // first (bw_pullup: one copy into one block). Empty (not nullopt) when
    // nothing is held. nullopt when they span blocks and cannot be joined:
    // an error is recorded (bw_pullup refuses then) or BW_ENOMEM; error()
    // says which. Valid until the next call that can grow, move or send
    // them (see INVALIDATION in bufwriter.h).
    std::optional<std::string_view> view() noexcept {
        const unsigned char *p = bw_data(&w_);
        size_t n = bw_len(&w_);
        if (p == nullptr && n > 0) p = bw_pullup(&w_);
        if (p == nullptr && n > 0) return std::nullopt;
        return p != nullptr ? std::string_view(reinterpret_cast<const char *>(p), n)
                            : std::string_view();
    }
#ifdef BW__HPP_SPAN
    // view() as bytes (C++20).
    std::optional<std::span<const std::byte>> bytes() noexcept {
        std::optional<std::string_view> v = view();
        if (!v) return std::nullopt;
        return std::span<const std::byte>(reinterpret_cast<const std::byte *>(v->data()),
                                          v->size());
    }
#endif
    // bw_cstr: every held byte and a NUL after them (not counted in len());
    // nullptr on failure: a full fixed or streaming buffer (nothing
    // recorded), BW_ENOMEM (recorded). Valid as view().
    const char *cstr() noexcept { return bw_cstr(&w_); }
    size_t len() const noexcept { return bw_len(&w_); }
    // The held bytes when they lie in one block, else nullptr (bw_data).
    const unsigned char *data() const noexcept { return bw_data(&w_); }
    // bw_iovec: the held bytes' pieces (include <sys/uio.h> for struct
    // iovec); returns how many entries all of them need.
    size_t iovec(struct ::iovec *iov, size_t max) const noexcept {
        return bw_iovec(&w_, iov, max);
    }
    // Append a copy of src's held bytes (bw_append_writer; src may be *this).
    int append(const writer &src) noexcept { return bw_append_writer(&w_, &src.w_); }
    // bw_detach as an owning block: returned to the writer's pool when the
    // detached object goes (the pool kept alive until then). Empty when the
    // writer had no storage or on failure (recorded: BW_EINVAL for a fixed
    // writer, BW_ENOMEM).
    detached detach() noexcept {
        detached d;
        d.pool_ = bw_writer_pool(&w_);
        d.block_ = bw_detach(&w_, &d.len_, &d.cap_);
        if (d.block_ != nullptr) d.box_ = detail::box_ref(box_);
        return d;
    }
    // bw_detach_malloc as an owning pointer released with free(): the held
    // bytes and a NUL after them; *len (when given) gets their count. Empty
    // on failure (recorded: BW_ENOMEM). The writer is empty afterwards.
    std::unique_ptr<char, detail::free_delete> detach_malloc(size_t *len = nullptr) noexcept {
        return std::unique_ptr<char, detail::free_delete>(
            static_cast<char *>(bw_detach_malloc(&w_, len)));
    }
    // bw_append_ref: a segmented writer links [data, data + n) without a
    // copy and calls done(ctx, data, n) once when those bytes leave it; other
    // modes copy and call done at once. The memory must stay valid and
    // unchanged until done runs.
    int append_ref(const void *data, size_t n, bw_done_fn done = nullptr,
                   void *ctx = nullptr) noexcept {
        return bw_append_ref(&w_, data, n, done, ctx);
    }
    int append_ref(std::string_view s, bw_done_fn done = nullptr, void *ctx = nullptr) noexcept {
        return bw_append_ref(&w_, s.data(), s.size(), done, ctx);
    }
    // bw_move: append src's held bytes to this writer and empty src; between
    // two segmented writers of one pool the blocks are relinked, not copied.
    int move_from(writer &src) noexcept { return bw_move(&w_, &src.w_); }
#ifdef BW_HAVE_FILE_ADAPTER
    // bw_fopen as a closing handle: check it (empty with errno set on
    // failure). Close it before this writer is moved or destroyed.
    file fopen() noexcept { return file(bw_fopen(&w_)); }
#endif
    int copy_out(size_t offset, void *dst, size_t n) const noexcept {
        return bw_copy_out(&w_, offset, dst, n);
    }
    int consume(size_t n) noexcept { return bw_consume(&w_, n); }
    int write_fd(int fd, size_t *written = nullptr) noexcept {
        return bw_write_fd(&w_, fd, written);
    }

  private:
    // An empty writer holding a share of p, for the factories to init.
    enum share_t { share };
    writer(const pool &p, share_t) noexcept : w_(), box_(detail::box_ref(p.box_)) {}

    bw_writer w_;
    detail::pool_box *box_ = nullptr; // the share of a bw::pool, if made from one
};

} // namespace bw

#endif // C++17
#endif // BUFWRITER_HPP
