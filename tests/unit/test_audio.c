/* Unit tests for the audio module. Usage: test_audio DIR, where DIR was made by make_wavs.sh. */
#define _POSIX_C_SOURCE 200809L

#include "core/audio.h"
#include "core/error.h"
#include "core/rng.h"
#include "wbtest.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static const double two_pi = 6.283185307179586476925286766559;

struct wbuf {
    unsigned char *p;
    size_t n, cap;
};

static void put(struct wbuf *b, const void *src, size_t n)
{
    if (b->n + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->n + n)
            cap *= 2;
        unsigned char *p = realloc(b->p, cap);
        if (!p) {
            fprintf(stderr, "test_audio: out of memory\n");
            exit(99);
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->n, src, n);
    b->n += n;
}

static void put8(struct wbuf *b, unsigned v)
{
    unsigned char c = (unsigned char)v;
    put(b, &c, 1);
}

static void put16(struct wbuf *b, unsigned v)
{
    put8(b, v & 0xFF);
    put8(b, (v >> 8) & 0xFF);
}

static void put32(struct wbuf *b, uint32_t v)
{
    put16(b, v & 0xFFFF);
    put16(b, v >> 16);
}

static void put64(struct wbuf *b, uint64_t v)
{
    put32(b, (uint32_t)v);
    put32(b, (uint32_t)(v >> 32));
}

static void put_id(struct wbuf *b, const char *id) { put(b, id, 4); }

static void set32(struct wbuf *b, size_t at, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b->p[at + i] = (unsigned char)(v >> (8 * i));
}

static void riff_begin(struct wbuf *b)
{
    put_id(b, "RIFF");
    put32(b, 0);
    put_id(b, "WAVE");
}

static void riff_end(struct wbuf *b) { set32(b, 4, (uint32_t)(b->n - 8)); }

static void put_fmt(struct wbuf *b, unsigned tag, unsigned ch, uint32_t rate, unsigned bits, unsigned align)
{
    put_id(b, "fmt ");
    put32(b, 16);
    put16(b, tag);
    put16(b, ch);
    put32(b, rate);
    put32(b, rate * align);
    put16(b, align);
    put16(b, bits);
}

static const unsigned char guid_tail[14] = {0x00, 0x00, 0x00, 0x00, 0x10, 0x00, 0x80,
                                            0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71};

static void put_fmt_ext(struct wbuf *b, unsigned subtag, unsigned ch, uint32_t rate, unsigned bits, unsigned valid,
                        unsigned align)
{
    put_id(b, "fmt ");
    put32(b, 40);
    put16(b, 0xFFFE);
    put16(b, ch);
    put32(b, rate);
    put32(b, rate * align);
    put16(b, align);
    put16(b, bits);
    put16(b, 22);
    put16(b, valid);
    put32(b, 0);
    put16(b, subtag);
    put(b, guid_tail, sizeof guid_tail);
}

static void put_chunk(struct wbuf *b, const char *id, const void *data, uint32_t size, int pad)
{
    put_id(b, id);
    put32(b, size);
    put(b, data, size);
    if ((size & 1) && pad)
        put8(b, 0);
}

/* A whole file: fmt (plain) then data. */
static struct wbuf make_wav(unsigned tag, unsigned ch, uint32_t rate, unsigned bits, const void *data, uint32_t n)
{
    struct wbuf b = {0};
    riff_begin(&b);
    put_fmt(&b, tag, ch, rate, bits, ch * bits / 8);
    put_chunk(&b, "data", data, n, 1);
    riff_end(&b);
    return b;
}

static const int16_t base_values[8] = {0, 16384, -16384, 32767, -32768, 1, -1, 100};

static struct wbuf make_base(void)
{
    struct wbuf d = {0};
    for (int i = 0; i < 8; i++)
        put16(&d, (uint16_t)base_values[i]);
    struct wbuf b = make_wav(1, 1, 8000, 16, d.p, (uint32_t)d.n);
    free(d.p);
    return b;
}

/* Decode from an exactly-sized heap copy, so valgrind sees any read past the end. */
static int decode(const unsigned char *p, size_t n, const char *name, struct wb_audio *a)
{
    unsigned char *copy = malloc(n ? n : 1);
    if (n)
        memcpy(copy, p, n);
    int rc = wb_audio_decode_wav(copy, n, name, a);
    free(copy);
    return rc;
}

/* The last message is one line that starts with "label: " and contains want. */
static int msg_is(const char *label, const char *want)
{
    const char *m = wb_error_message();
    size_t n = strlen(label);
    return strncmp(m, label, n) == 0 && strncmp(m + n, ": ", 2) == 0 && strstr(m, want) && !strchr(m, '\n');
}

static void expect_reject(const struct wbuf *b, const char *label, const char *want)
{
    struct wb_audio a;
    int rc = decode(b->p, b->n, label, &a);
    WBTEST_CHECK(rc == WB_EINPUT && a.samples == NULL && msg_is(label, want), "%s is refused with \"%s\" (rc %d: %s)",
                 label, want, rc, wb_error_message());
    wb_audio_free(&a);
}

static void expect_base(const struct wbuf *b, const char *label)
{
    struct wb_audio a;
    int rc = decode(b->p, b->n, label, &a);
    int same = rc == 0 && a.nsamples == 8;
    for (int i = 0; same && i < 8; i++)
        same = a.samples[i] == (float)(base_values[i] / 32768.0);
    WBTEST_CHECK(same && a.sample_rate_hz == 8000 && a.channels == 1 && a.bits == 16,
                 "%s decodes to the 8 known samples (rc %d, n %lld: %s)", label, rc, (long long)a.nsamples,
                 rc ? wb_error_message() : "ok");
    wb_audio_free(&a);
}

static void check_values(const struct wbuf *b, const char *label, const double *want, int n, int ch, int bits,
                         int is_float)
{
    struct wb_audio a;
    int rc = decode(b->p, b->n, label, &a);
    int same = rc == 0 && a.nsamples == n;
    for (int i = 0; same && i < n; i++)
        same = fabs(a.samples[i] - want[i]) <= 2e-7;
    WBTEST_CHECK(same && a.channels == ch && a.bits == bits && a.is_float == is_float,
                 "%s decodes to the expected values (rc %d, n %lld, ch %d, bits %d: %s)", label, rc,
                 (long long)a.nsamples, a.channels, a.bits, rc ? wb_error_message() : "ok");
    wb_audio_free(&a);
}

static void test_scaling(void)
{
    struct wbuf d = {0}, b;

    const unsigned char u8[4] = {0, 128, 255, 64};
    const double u8_want[4] = {-1.0, 0.0, 127.0 / 128.0, -0.5};
    b = make_wav(1, 1, 8000, 8, u8, 4);
    check_values(&b, "u8.wav", u8_want, 4, 1, 8, 0);
    free(b.p);

    const int32_t s24[4] = {-8388608, 8388607, 1, 0};
    double s24_want[4];
    for (int i = 0; i < 4; i++) {
        put8(&d, (uint32_t)s24[i] & 0xFF);
        put8(&d, ((uint32_t)s24[i] >> 8) & 0xFF);
        put8(&d, ((uint32_t)s24[i] >> 16) & 0xFF);
        s24_want[i] = (float)(s24[i] / 8388608.0);
    }
    b = make_wav(1, 1, 8000, 24, d.p, (uint32_t)d.n);
    check_values(&b, "s24.wav", s24_want, 4, 1, 24, 0);
    free(b.p);
    d.n = 0;

    /* The same values in a WAVE_FORMAT_EXTENSIBLE file (sox writes 24-bit this way). */
    b = (struct wbuf){0};
    riff_begin(&b);
    put_fmt_ext(&b, 1, 1, 8000, 24, 24, 3);
    for (int i = 0; i < 4; i++) {
        put8(&d, (uint32_t)s24[i] & 0xFF);
        put8(&d, ((uint32_t)s24[i] >> 8) & 0xFF);
        put8(&d, ((uint32_t)s24[i] >> 16) & 0xFF);
    }
    put_chunk(&b, "data", d.p, (uint32_t)d.n, 1);
    riff_end(&b);
    check_values(&b, "ext_s24.wav", s24_want, 4, 1, 24, 0);
    free(b.p);
    d.n = 0;

    const int64_t s32[4] = {INT32_MIN, INT32_MAX, 1 << 30, -1};
    double s32_want[4];
    for (int i = 0; i < 4; i++) {
        put32(&d, (uint32_t)s32[i]);
        s32_want[i] = (float)(s32[i] / 2147483648.0);
    }
    b = make_wav(1, 1, 8000, 32, d.p, (uint32_t)d.n);
    check_values(&b, "s32.wav", s32_want, 4, 1, 32, 0);
    free(b.p);
    d.n = 0;

    /* 24 valid bits left-justified in a 32-bit container scale by the container. */
    b = (struct wbuf){0};
    riff_begin(&b);
    put_fmt_ext(&b, 1, 1, 8000, 32, 24, 4);
    for (int i = 0; i < 4; i++)
        put32(&d, (uint32_t)s24[i] << 8);
    put_chunk(&b, "data", d.p, (uint32_t)d.n, 1);
    riff_end(&b);
    check_values(&b, "ext_s24_in_32.wav", s24_want, 4, 1, 32, 0);
    free(b.p);
    d.n = 0;

    const float f32[4] = {0.5f, -0.25f, 1.5f, 0.0f};
    const double f32_want[4] = {0.5, -0.25, 1.5, 0.0};
    for (int i = 0; i < 4; i++) {
        uint32_t u;
        memcpy(&u, &f32[i], 4);
        put32(&d, u);
    }
    b = make_wav(3, 1, 8000, 32, d.p, (uint32_t)d.n);
    check_values(&b, "f32.wav", f32_want, 4, 1, 32, 1);
    free(b.p);
    d.n = 0;

    const double f64[4] = {0.125, -1.0, 3.0, 1e-3};
    double f64_want[4];
    for (int i = 0; i < 4; i++) {
        uint64_t u;
        memcpy(&u, &f64[i], 8);
        put64(&d, u);
        f64_want[i] = (float)f64[i];
    }
    b = make_wav(3, 1, 8000, 64, d.p, (uint32_t)d.n);
    check_values(&b, "f64.wav", f64_want, 4, 1, 64, 1);
    free(b.p);
    d.n = 0;

    const int16_t st[6] = {16384, -32768, 100, 200, -1, 0};
    const double st_want[3] = {-0.25, 150.0 / 32768.0, -0.5 / 32768.0};
    for (int i = 0; i < 6; i++)
        put16(&d, (uint16_t)st[i]);
    b = make_wav(1, 2, 44100, 16, d.p, (uint32_t)d.n);
    check_values(&b, "stereo.wav", st_want, 3, 2, 16, 0);
    free(b.p);
    d.n = 0;

    const int16_t c3[6] = {32767, 32767, 32767, 1, 2, 3};
    const double c3_want[2] = {32767.0 / 32768.0, 2.0 / 32768.0};
    for (int i = 0; i < 6; i++)
        put16(&d, (uint16_t)c3[i]);
    b = make_wav(1, 3, 44100, 16, d.p, (uint32_t)d.n);
    check_values(&b, "three.wav", c3_want, 2, 3, 16, 0);
    free(b.p);
    d.n = 0;

    const float ef[4] = {0.5f, 0.25f, -1.0f, 1.0f};
    const double ef_want[2] = {0.375, 0.0};
    b = (struct wbuf){0};
    riff_begin(&b);
    put_fmt_ext(&b, 3, 2, 48000, 32, 32, 8);
    for (int i = 0; i < 4; i++) {
        uint32_t u;
        memcpy(&u, &ef[i], 4);
        put32(&d, u);
    }
    put_chunk(&b, "data", d.p, (uint32_t)d.n, 1);
    riff_end(&b);
    check_values(&b, "ext_float.wav", ef_want, 2, 2, 32, 1);
    free(b.p);
    d.n = 0;

    /* validBitsPerSample 0 means "not given"; 8-bit stays unsigned inside EXTENSIBLE. */
    b = (struct wbuf){0};
    riff_begin(&b);
    put_fmt_ext(&b, 1, 1, 8000, 8, 0, 1);
    put_chunk(&b, "data", u8, 4, 1);
    riff_end(&b);
    check_values(&b, "ext_u8.wav", u8_want, 4, 1, 8, 0);
    free(b.p);

    unsigned char wide[64 * 2];
    memset(wide, 0, sizeof wide);
    wide[126] = 0x00;
    wide[127] = 0x40; /* last channel 16384: the mix is 0.5 / 64 */
    const double wide_want[1] = {0.5 / 64};
    b = make_wav(1, 64, 44100, 16, wide, sizeof wide);
    check_values(&b, "64ch.wav", wide_want, 1, 64, 16, 0);
    free(b.p);

    struct wb_audio a;
    const unsigned char one[2] = {0, 0x40};
    b = make_wav(1, 1, 1, 16, one, 2);
    int rc = decode(b.p, b.n, "1hz.wav", &a);
    WBTEST_CHECK(rc == 0 && a.sample_rate_hz == 1, "a 1 Hz sample rate is accepted");
    wb_audio_free(&a);
    free(b.p);
    b = make_wav(1, 1, WB_AUDIO_MAX_RATE_HZ, 16, one, 2);
    rc = decode(b.p, b.n, "1mhz.wav", &a);
    WBTEST_CHECK(rc == 0 && a.sample_rate_hz == WB_AUDIO_MAX_RATE_HZ, "a %d Hz sample rate is accepted",
                 WB_AUDIO_MAX_RATE_HZ);
    wb_audio_free(&a);
    free(b.p);
    free(d.p);
}

/* Layout of make_base(): RIFF header 12, fmt chunk 24, "data" at 36, its size at 40, samples from 44. */
enum { BASE_DATA_SIZE_AT = 40, BASE_DATA_AT = 44, BASE_DATA_BYTES = 16 };

static void test_chunks(void)
{
    struct wbuf d = {0}, b;
    for (int i = 0; i < 8; i++)
        put16(&d, (uint16_t)base_values[i]);

    b = make_base();
    struct wb_audio a;
    int rc = decode(b.p, b.n, "some/dir/base.wav", &a);
    WBTEST_CHECK(rc == 0 && strcmp(a.name, "base.wav") == 0 && a.data_bytes == 16 && a.is_float == 0,
                 "the name is the basename (%s) and data_bytes counts the source bytes (%lld)", a.name,
                 (long long)a.data_bytes);
    wb_audio_free(&a);
    WBTEST_CHECK(a.samples == NULL, "wb_audio_free sets the pointer to NULL");
    expect_base(&b, "base.wav");
    free(b.p);

    b = (struct wbuf){0};
    riff_begin(&b);
    put_chunk(&b, "bext", "abc", 3, 1);
    put_fmt(&b, 1, 1, 8000, 16, 2);
    put_chunk(&b, "data", d.p, (uint32_t)d.n, 1);
    riff_end(&b);
    expect_base(&b, "odd_chunk_padded.wav");
    free(b.p);

    b = (struct wbuf){0};
    riff_begin(&b);
    put_chunk(&b, "bext", "abc", 3, 0);
    put_fmt(&b, 1, 1, 8000, 16, 2);
    put_chunk(&b, "data", d.p, (uint32_t)d.n, 1);
    riff_end(&b);
    expect_base(&b, "odd_chunk_unpadded.wav");
    free(b.p);

    /* Chunks other encoders add: JUNK, fact, LIST/INFO with an odd string, PEAK, and chunks after the data. */
    b = (struct wbuf){0};
    riff_begin(&b);
    put_chunk(&b, "JUNK", "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 28, 1);
    put_fmt(&b, 1, 1, 8000, 16, 2);
    put_chunk(&b, "fact", "\x08\0\0\0", 4, 1);
    put_chunk(&b, "LIST", "INFOISFT\x05\0\0\0Lavf\0\0", 18, 1);
    put_chunk(&b, "PEAK", "\x01\0\0\0\0\0\0\0\0\0\x80\x3f\0\0\0\0", 16, 1);
    put_chunk(&b, "data", d.p, (uint32_t)d.n, 1);
    put_chunk(&b, "id3 ", "ID3\x03", 4, 1);
    put(&b, "trailing garbage", 16);
    riff_end(&b);
    expect_base(&b, "many_chunks.wav");
    free(b.p);

    const uint32_t riff_sizes[4] = {0xFFFFFFFFu, 0, 1000000, 4};
    for (int i = 0; i < 4; i++) {
        char label[64];
        b = make_base();
        set32(&b, 4, riff_sizes[i]);
        snprintf(label, sizeof label, "riff_size_%08X.wav", (unsigned)riff_sizes[i]);
        expect_base(&b, label);
        free(b.p);
    }

    /* Unknown length: the data runs to the end of the file, and a trailing partial frame is dropped. */
    const uint32_t unknown[3] = {0xFFFFFFFFu, 0, 0x7ffff000u};
    for (int i = 0; i < 3; i++) {
        char label[64];
        b = make_base();
        set32(&b, BASE_DATA_SIZE_AT, unknown[i]);
        put8(&b, 0x55);
        snprintf(label, sizeof label, "data_size_%08X.wav", (unsigned)unknown[i]);
        expect_base(&b, label);
        free(b.p);
    }

    /* SoX rounds its unknown length down to whole frames: 0x7fffefff for 3-byte frames. */
    b = (struct wbuf){0};
    riff_begin(&b);
    put_fmt(&b, 1, 1, 8000, 24, 3);
    put_id(&b, "data");
    put32(&b, 0x7fffefffu);
    for (int i = 0; i < 8 * 3; i++)
        put8(&b, (unsigned)i);
    riff_end(&b);
    rc = decode(b.p, b.n, "sox_pipe_s24.wav", &a);
    WBTEST_CHECK(rc == 0 && a.nsamples == 8, "sox's pipe length for 24-bit data means 'to the end' (rc %d: %s)", rc,
                 wb_error_message());
    wb_audio_free(&a);
    free(b.p);

    /* An odd-sized data chunk (2 * 8 + 1 bytes): the partial frame is ignored. */
    b = (struct wbuf){0};
    riff_begin(&b);
    put_fmt(&b, 1, 1, 8000, 16, 2);
    put_id(&b, "data");
    put32(&b, 17);
    put(&b, d.p, d.n);
    put16(&b, 0x7F);
    riff_end(&b);
    rc = decode(b.p, b.n, "partial_frame.wav", &a);
    WBTEST_CHECK(rc == 0 && a.nsamples == 8 && a.data_bytes == 16, "a trailing partial frame is ignored (n %lld)",
                 (long long)a.nsamples);
    wb_audio_free(&a);
    free(b.p);

    const char *forms[2] = {"RF64", "BW64"};
    for (int i = 0; i < 2; i++) {
        char label[32];
        b = (struct wbuf){0};
        put_id(&b, forms[i]);
        put32(&b, 0xFFFFFFFFu);
        put_id(&b, "WAVE");
        put_id(&b, "ds64");
        put32(&b, 28);
        put64(&b, 0); /* riff size, unused */
        put64(&b, 16);
        put64(&b, 8);
        put32(&b, 0);
        put_fmt(&b, 1, 1, 8000, 16, 2);
        put_id(&b, "data");
        put32(&b, 0xFFFFFFFFu);
        put(&b, d.p, d.n);
        put(&b, "LIST", 4); /* bytes past the ds64 data size are not audio */
        snprintf(label, sizeof label, "%s.wav", forms[i]);
        expect_base(&b, label);
        free(b.p);
    }
    free(d.p);
}

static void test_rejects(void)
{
    struct wbuf b, d = {0};
    struct wb_audio a;
    int rc;

    rc = wb_audio_decode_wav((const unsigned char *)"", 0, "empty.wav", &a);
    WBTEST_CHECK(rc == WB_EINPUT && msg_is("empty.wav", "empty file (0 bytes)"), "an empty buffer is refused: %s",
                 wb_error_message());
    rc = wb_audio_decode_wav(NULL, 0, NULL, &a);
    WBTEST_CHECK(rc == WB_EINPUT && msg_is("(buffer)", "empty"), "a NULL buffer without a name is refused: %s",
                 wb_error_message());

    b = (struct wbuf){0};
    put(&b, "RIF", 3);
    expect_reject(&b, "rif.wav", "no RIFF/WAVE header");
    free(b.p);
    b = (struct wbuf){0};
    put(&b, "this is a text file, not audio\n", 31);
    expect_reject(&b, "text.wav", "not a WAV file (no RIFF/WAVE header)");
    free(b.p);

    struct {
        const char *bytes;
        size_t n;
        const char *label, *want;
    } magic[] = {
        {"RIFX\x24\0\0\0WAVEfmt ", 16, "rifx.wav", "big-endian (RIFX)"},
        {"RIFF\x24\0\0\0AVI LIST", 16, "avi.wav", "RIFF file of type 'AVI '"},
        {"fLaC\0\0\0\x22", 8, "flac.wav", "looks like FLAC"},
        {"OggS\0\x02\0\0", 8, "ogg.wav", "looks like Ogg"},
        {"ID3\x04\0\0\0\0", 8, "mp3.wav", "looks like MP3"},
        {"FORM\0\0\0\0AIFFCOMM", 16, "aiff.wav", "looks like AIFF"},
        {"RIFF\x24\0\0", 7, "seven.wav", "too short to be a WAV file (7 bytes)"},
    };
    for (size_t i = 0; i < sizeof magic / sizeof magic[0]; i++) {
        b = (struct wbuf){0};
        put(&b, magic[i].bytes, magic[i].n);
        expect_reject(&b, magic[i].label, magic[i].want);
        free(b.p);
    }

    /* Every prefix of a good file is refused cleanly (under valgrind: without reading past the end). */
    struct wbuf base = make_base();
    int bad = 0;
    for (size_t n = 0; n < base.n; n++) {
        rc = decode(base.p, n, "cut.wav", &a);
        if (rc != WB_EINPUT || a.samples || !msg_is("cut.wav", ""))
            bad++;
        wb_audio_free(&a);
    }
    WBTEST_CHECK(bad == 0, "all %zu truncations of a good file are refused with a message (%d not)", base.n, bad);

    struct {
        size_t n;
        const char *want;
    } cuts[] = {
        {10, "too short to be a WAV file (10 bytes)"},
        {16, "no fmt chunk before the end of the file (16 bytes)"},
        {30, "'fmt ' chunk claims 16 bytes but only 10 remain"},
        {40, "no data chunk before the end of the file (40 bytes)"},
        {BASE_DATA_AT + 6, "data chunk claims 16 bytes but only 6 remain; the file is truncated"},
    };
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++) {
        b = (struct wbuf){0};
        put(&b, base.p, cuts[i].n);
        expect_reject(&b, "cut.wav", cuts[i].want);
        free(b.p);
    }

    b = make_base();
    set32(&b, BASE_DATA_SIZE_AT, 1000);
    expect_reject(&b, "data_overflow.wav", "data chunk claims 1000 bytes but only 16 remain");
    free(b.p);

    for (int i = 0; i < 8; i++)
        put16(&d, (uint16_t)base_values[i]);

    b = (struct wbuf){0};
    riff_begin(&b);
    put_id(&b, "LIST");
    put32(&b, 5000);
    put(&b, "INFO", 4);
    put_fmt(&b, 1, 1, 8000, 16, 2);
    put_chunk(&b, "data", d.p, (uint32_t)d.n, 1);
    expect_reject(&b, "chunk_overflow.wav", "'LIST' chunk claims 5000 bytes but only");
    free(b.p);

    b = (struct wbuf){0};
    riff_begin(&b);
    put_chunk(&b, "data", d.p, (uint32_t)d.n, 1);
    put_fmt(&b, 1, 1, 8000, 16, 2);
    riff_end(&b);
    expect_reject(&b, "data_first.wav", "the data chunk comes before the fmt chunk");
    free(b.p);

    b = (struct wbuf){0};
    riff_begin(&b);
    put_chunk(&b, "LIST", "INFO", 4, 1);
    riff_end(&b);
    expect_reject(&b, "no_fmt.wav", "no fmt chunk");
    free(b.p);

    b = (struct wbuf){0};
    riff_begin(&b);
    put_fmt(&b, 1, 1, 8000, 16, 2);
    put_chunk(&b, "LIST", "INFO", 4, 1);
    riff_end(&b);
    expect_reject(&b, "no_data.wav", "no data chunk");
    free(b.p);

    b = (struct wbuf){0};
    riff_begin(&b);
    put_fmt(&b, 1, 1, 8000, 16, 2);
    put_fmt(&b, 1, 2, 8000, 16, 4);
    put_chunk(&b, "data", d.p, (uint32_t)d.n, 1);
    riff_end(&b);
    expect_reject(&b, "two_fmt.wav", "more than one fmt chunk");
    free(b.p);

    b = make_wav(1, 1, 8000, 16, "", 0);
    expect_reject(&b, "empty_data.wav", "no samples (the data chunk is empty)");
    free(b.p);

    b = make_wav(1, 2, 8000, 16, "abc", 3);
    expect_reject(&b, "short_data.wav", "the data chunk holds 3 bytes, less than one 4-byte frame");
    free(b.p);

    struct {
        unsigned tag, ch, bits, align;
        uint32_t rate;
        const char *label, *want;
    } fmts[] = {
        {1, 0, 16, 0, 8000, "zero_channels.wav", "the fmt chunk says 0 channels"},
        {1, 65, 16, 130, 8000, "65_channels.wav", "65 channels; at most 64"},
        {1, 1, 16, 2, 0, "zero_rate.wav", "sample rate of 0 Hz"},
        {1, 1, 16, 2, 1000001, "fast_rate.wav", "sample rate 1000001 Hz is above the 1000000 Hz limit"},
        {2, 1, 4, 256, 8000, "adpcm.wav",
         "unsupported WAV format 0x0002 (MS ADPCM); convert it to PCM, e.g. sox adpcm.wav -e signed -b 16 out.wav"},
        {6, 1, 8, 1, 8000, "alaw.wav", "unsupported WAV format 0x0006 (A-law)"},
        {7, 1, 8, 1, 8000, "ulaw.wav", "unsupported WAV format 0x0007 (mu-law)"},
        {0x11, 1, 4, 256, 8000, "ima.wav", "unsupported WAV format 0x0011 (IMA ADPCM)"},
        {0x55, 2, 0, 1, 44100, "mp3.wav", "unsupported WAV format 0x0055 (MP3)"},
        {0, 1, 16, 2, 8000, "tag0.wav", "unsupported WAV format 0x0000 (unknown)"},
        {0x1234, 1, 16, 2, 8000, "tag1234.wav", "unsupported WAV format 0x1234 (not PCM or float)"},
        {1, 1, 12, 2, 8000, "pcm12.wav", "unsupported PCM sample size of 12 bits"},
        {1, 1, 20, 3, 8000, "pcm20.wav", "unsupported PCM sample size of 20 bits"},
        {1, 1, 64, 8, 8000, "pcm64.wav", "unsupported PCM sample size of 64 bits"},
        {3, 1, 16, 2, 8000, "half.wav", "unsupported float sample size of 16 bits (supported: 32, 64)"},
        {1, 2, 16, 2, 8000, "align.wav", "block_align is 2 but 2 channels of 16 bits need 4"},
        {3, 1, 32, 8, 8000, "align_f.wav", "block_align is 8 but 1 channels of 32 bits need 4"},
    };
    for (size_t i = 0; i < sizeof fmts / sizeof fmts[0]; i++) {
        b = (struct wbuf){0};
        riff_begin(&b);
        put_fmt(&b, fmts[i].tag, fmts[i].ch, fmts[i].rate, fmts[i].bits, fmts[i].align);
        put_chunk(&b, "data", d.p, (uint32_t)d.n, 1);
        riff_end(&b);
        expect_reject(&b, fmts[i].label, fmts[i].want);
        free(b.p);
    }

    b = (struct wbuf){0};
    riff_begin(&b);
    put_chunk(&b, "fmt ", "\x01\0\x01\0\x40\x1f\0\0\x80\x3e\0\0\x02\0", 14, 1);
    put_chunk(&b, "data", d.p, (uint32_t)d.n, 1);
    riff_end(&b);
    expect_reject(&b, "fmt14.wav", "fmt chunk is too short (14 bytes, need at least 16)");
    free(b.p);

    b = (struct wbuf){0};
    riff_begin(&b);
    put_chunk(&b, "fmt ", "\xfe\xff\x01\0\x40\x1f\0\0\x80\x3e\0\0\x02\0\x10\0\0\0", 18, 1);
    put_chunk(&b, "data", d.p, (uint32_t)d.n, 1);
    riff_end(&b);
    expect_reject(&b, "ext18.wav", "WAVE_FORMAT_EXTENSIBLE fmt chunk is too short (18 bytes, need 40)");
    free(b.p);

    b = (struct wbuf){0};
    riff_begin(&b);
    put_fmt_ext(&b, 6, 1, 8000, 8, 8, 1);
    put_chunk(&b, "data", d.p, (uint32_t)d.n, 1);
    riff_end(&b);
    expect_reject(&b, "ext_alaw.wav", "unsupported WAV format 0x0006 (A-law) inside WAVE_FORMAT_EXTENSIBLE");
    free(b.p);

    b = (struct wbuf){0};
    riff_begin(&b);
    put_fmt_ext(&b, 1, 1, 8000, 24, 28, 3);
    put_chunk(&b, "data", d.p, 15, 1);
    riff_end(&b);
    expect_reject(&b, "ext_valid.wav", "28 valid bits per sample do not fit the 24-bit container");
    free(b.p);

    /* Ambisonic B-format subformat (as sox writes .amb): a GUID that is not the PCM/float family. */
    b = (struct wbuf){0};
    riff_begin(&b);
    put_fmt_ext(&b, 1, 4, 8000, 16, 16, 8);
    memcpy(b.p + b.n - 14, "\x00\x00\x21\x07\xd3\x11\x86\x44\xc8\xc1\xca\x00\x00\x00", 14);
    put_chunk(&b, "data", d.p, (uint32_t)d.n, 1);
    riff_end(&b);
    expect_reject(&b, "amb.wav", "subformat {00000001-0721-11D3-8644-C8C1CA000000} is not PCM or IEEE float");
    free(b.p);

    b = (struct wbuf){0};
    put_id(&b, "RF64");
    put32(&b, 0xFFFFFFFFu);
    put_id(&b, "WAVE");
    put_chunk(&b, "ds64", "\0\0\0\0\0\0\0\0\0\0\0\0", 12, 1);
    put_fmt(&b, 1, 1, 8000, 16, 2);
    put_chunk(&b, "data", d.p, (uint32_t)d.n, 1);
    expect_reject(&b, "ds64.wav", "ds64 chunk is too short (12 bytes, need 24)");
    free(b.p);

    const float nan_f[4] = {0.0f, 0.5f, 0.25f, NAN};
    d.n = 0;
    for (int i = 0; i < 4; i++) {
        uint32_t u;
        memcpy(&u, &nan_f[i], 4);
        put32(&d, u);
    }
    b = make_wav(3, 1, 8000, 32, d.p, (uint32_t)d.n);
    expect_reject(&b, "nan.wav", "sample 3 (at 0.000375 s) is NaN or infinite");
    free(b.p);

    const double inf_d[2] = {0.5, -INFINITY};
    d.n = 0;
    for (int i = 0; i < 2; i++) {
        uint64_t u;
        memcpy(&u, &inf_d[i], 8);
        put64(&d, u);
    }
    b = make_wav(3, 2, 8000, 64, d.p, (uint32_t)d.n);
    expect_reject(&b, "inf.wav", "sample 0 (at 0.000000 s) is NaN or infinite");
    free(b.p);

    const double huge_d[1] = {1e300};
    d.n = 0;
    uint64_t u;
    memcpy(&u, &huge_d[0], 8);
    put64(&d, u);
    b = make_wav(3, 1, 8000, 64, d.p, (uint32_t)d.n);
    expect_reject(&b, "huge.wav", "beyond float range");
    free(b.p);

    free(base.p);
    free(d.p);
}

static uint64_t fuzz_state = 0x5eed;

static uint64_t fuzz_next(void) { return wb_rng_next(&fuzz_state); }

/* Random damage to good files must give 0 with sane fields or WB_EINPUT with a message, never a crash. */
static void test_fuzz(void)
{
    struct wbuf t[4];
    t[0] = make_base();
    t[1] = (struct wbuf){0};
    riff_begin(&t[1]);
    put_chunk(&t[1], "bext", "abc", 3, 1);
    put_fmt_ext(&t[1], 3, 2, 48000, 32, 32, 8);
    put_chunk(&t[1], "LIST", "INFOICMT\x03\0\0\0ab\0\0", 16, 1);
    put_id(&t[1], "data");
    put32(&t[1], 64);
    for (int i = 0; i < 16; i++)
        put32(&t[1], 0x3e800000u + (uint32_t)i);
    riff_end(&t[1]);
    t[2] = (struct wbuf){0};
    riff_begin(&t[2]);
    put_fmt(&t[2], 1, 3, 44100, 24, 9);
    put_id(&t[2], "data");
    put32(&t[2], 0xFFFFFFFFu);
    for (int i = 0; i < 90; i++)
        put8(&t[2], (unsigned)(i * 37));
    riff_end(&t[2]);
    t[3] = (struct wbuf){0};
    put_id(&t[3], "RF64");
    put32(&t[3], 0xFFFFFFFFu);
    put_id(&t[3], "WAVE");
    put_id(&t[3], "ds64");
    put32(&t[3], 28);
    put64(&t[3], 0);
    put64(&t[3], 32);
    put64(&t[3], 4);
    put32(&t[3], 0);
    put_fmt(&t[3], 3, 1, 8000, 64, 8);
    put_id(&t[3], "data");
    put32(&t[3], 0xFFFFFFFFu);
    for (int i = 0; i < 4; i++)
        put64(&t[3], 0x3FD0000000000000u + (uint64_t)i);

    static const uint32_t specials[8] = {0, 1, 0xFFFFFFFFu, 0x7FFFFFFFu, 0x80000000u, 0x7ffff000u, 0xFFFEu, 3};
    const int runs = 6000;
    int accepted = 0, bad = 0;
    for (int it = 0; it < runs; it++) {
        const struct wbuf *src = &t[it % 4];
        size_t n = src->n;
        unsigned char *p = malloc(n);
        memcpy(p, src->p, n);
        int k = 1 + (int)(fuzz_next() % 4);
        for (int j = 0; j < k && n > 4; j++) {
            switch (fuzz_next() % 4) {
            case 0:
                p[fuzz_next() % n] = (unsigned char)fuzz_next();
                break;
            case 1:
                p[fuzz_next() % (n < 80 ? n : 80)] = (unsigned char)fuzz_next();
                break;
            case 2: {
                size_t at = fuzz_next() % (n - 3);
                uint32_t v = specials[fuzz_next() % 8];
                for (int q = 0; q < 4; q++)
                    p[at + q] = (unsigned char)(v >> (8 * q));
                break;
            }
            default:
                n = fuzz_next() % (n + 1);
                break;
            }
        }
        struct wb_audio a;
        int rc = decode(p, n, "fuzz.wav", &a);
        if (rc == 0) {
            accepted++;
            int ok = a.samples && a.nsamples >= 1 && a.data_bytes <= (int64_t)n && a.channels >= 1 &&
                     a.channels <= WB_AUDIO_MAX_CHANNELS && a.sample_rate_hz >= 1 &&
                     a.data_bytes == a.nsamples * a.channels * (a.bits / 8);
            for (int64_t i = 0; ok && i < a.nsamples; i++)
                ok = isfinite(a.samples[i]) && (a.is_float || fabsf(a.samples[i]) <= 1.0f);
            bad += !ok;
        } else if (rc != WB_EINPUT || a.samples || !msg_is("fuzz.wav", "")) {
            bad++;
        }
        wb_audio_free(&a);
        free(p);
    }
    WBTEST_CHECK(bad == 0 && accepted > 0 && accepted < runs,
                 "%d damaged files give 0 with sane fields or WB_EINPUT with a message (%d accepted, %d bad)", runs,
                 accepted, bad);
    for (int i = 0; i < 4; i++)
        free(t[i].p);
}

static void test_check_nsamples(void)
{
    WBTEST_CHECK(wb_audio_check_nsamples(1, "x.wav") == 0 &&
                     wb_audio_check_nsamples(WB_AUDIO_MAX_SAMPLES, "x.wav") == 0,
                 "1 and WB_AUDIO_MAX_SAMPLES samples are allowed");
    int rc = wb_audio_check_nsamples(WB_AUDIO_MAX_SAMPLES + 1, "big.wav");
    WBTEST_CHECK(rc == WB_EINPUT &&
                     msg_is("big.wav", "2147483649 samples per channel, more than the limit of 2147483648"),
                 "one sample over the limit is refused: %s", wb_error_message());
    rc = wb_audio_check_nsamples(0, NULL);
    WBTEST_CHECK(rc == WB_EINPUT && msg_is("(input)", "no samples"), "0 samples are refused: %s", wb_error_message());
}

/* Amplitude of the component at f_hz (exact for whole cycles in the window). */
static double tone_amplitude(const float *x, int64_t n, double rate_hz, double f_hz)
{
    double w = two_pi * f_hz / rate_hz, c = 2 * cos(w), s1 = 0, s2 = 0;
    for (int64_t i = 0; i < n; i++) {
        double s0 = x[i] + c * s1 - s2;
        s2 = s1;
        s1 = s0;
    }
    double re = s1 - s2 * cos(w), im = s2 * sin(w);
    return 2 * sqrt(re * re + im * im) / (double)n;
}

static double zero_crossing_hz(const float *x, int64_t n, double rate_hz)
{
    int64_t c = 0;
    for (int64_t i = 1; i < n; i++)
        c += (x[i - 1] < 0) != (x[i] < 0);
    return (double)c / 2.0 / ((double)n / rate_hz);
}

static void test_synth(void)
{
    double f[WB_AUDIO_SYNTH_NTONES + 2], amp[WB_AUDIO_SYNTH_NTONES + 2];
    int nt = wb_audio_synth_tones(f, amp, WB_AUDIO_SYNTH_NTONES + 2);
    WBTEST_CHECK(nt == 4 && f[0] == 440 && f[1] == 1000 && f[2] == 3150 && f[3] == 6300 && amp[0] == 0.40 &&
                     amp[1] == 0.25 && amp[2] == 0.15 && amp[3] == 0.10,
                 "the synthetic tones are 440/1000/3150/6300 Hz at 0.40/0.25/0.15/0.10 (%d)", nt);
    WBTEST_CHECK(wb_audio_synth_tones(f, amp, 2) == 2 && wb_audio_synth_tones(NULL, NULL, 0) == 0 &&
                     wb_audio_synth_tones(f, NULL, -1) == 0,
                 "wb_audio_synth_tones fills at most max entries");

    struct wb_audio a, b, c, e;
    int rc = wb_audio_synth(&a, 1.0, 44100, 42, 3);
    WBTEST_CHECK(rc == 0 && a.nsamples == 44100 && a.sample_rate_hz == 44100 && a.channels == 1 && a.is_float &&
                     a.bits == 32 && a.data_bytes == 4 * 44100 && strcmp(a.name, "synth-3") == 0,
                 "synth: 1 s at 44100 Hz gives 44100 samples named %s (rc %d)", a.name, rc);
    if (rc != 0)
        return;
    wb_audio_synth(&b, 1.0, 44100, 42, 3);
    wb_audio_synth(&c, 1.0, 44100, 42, 4);
    wb_audio_synth(&e, 1.0, 44100, 43, 3);
    size_t bytes = (size_t)a.nsamples * sizeof(float);
    WBTEST_CHECK(b.samples && memcmp(a.samples, b.samples, bytes) == 0,
                 "synth: same seed and index give identical bits");
    WBTEST_CHECK(c.samples && memcmp(a.samples, c.samples, bytes) != 0, "synth: another index gives another signal");
    WBTEST_CHECK(e.samples && memcmp(a.samples, e.samples, bytes) != 0, "synth: another seed gives another signal");

    int tones_ok = 1;
    for (int k = 0; k < nt; k++) {
        double got = tone_amplitude(a.samples, a.nsamples, 44100, f[k]);
        printf("# synth tone %.0f Hz: amplitude %.5f (want %.2f)\n", f[k], got, amp[k]);
        tones_ok &= fabs(got - amp[k]) < 0.005 * amp[k];
    }
    WBTEST_CHECK(tones_ok, "synth: every tone is present at its amplitude within 0.5%%");
    double off = fmax(tone_amplitude(a.samples, a.nsamples, 44100, 2000),
                      tone_amplitude(a.samples, a.nsamples, 44100, 5000));
    WBTEST_CHECK(off < 0.002, "synth: nothing but noise between the tones (%.5f)", off);

    /* Remove the fitted tones (1 s at integer Hz: exact DFT bins); what is left is the noise. */
    double *res = malloc(bytes * 2);
    for (int64_t i = 0; i < a.nsamples; i++)
        res[i] = a.samples[i];
    for (int k = 0; k < nt; k++) {
        double re = 0, im = 0, w = two_pi * f[k] / 44100;
        for (int64_t i = 0; i < a.nsamples; i++) {
            re += a.samples[i] * cos(w * (double)i);
            im += a.samples[i] * sin(w * (double)i);
        }
        re *= 2.0 / (double)a.nsamples;
        im *= 2.0 / (double)a.nsamples;
        for (int64_t i = 0; i < a.nsamples; i++)
            res[i] -= re * cos(w * (double)i) + im * sin(w * (double)i);
    }
    double sq = 0, peak = 0, xpeak = 0;
    for (int64_t i = 0; i < a.nsamples; i++) {
        sq += res[i] * res[i];
        peak = fmax(peak, fabs(res[i]));
        xpeak = fmax(xpeak, fabs(a.samples[i]));
    }
    double rms = sqrt(sq / (double)a.nsamples), want_rms = WB_AUDIO_SYNTH_NOISE_AMPLITUDE / sqrt(3.0);
    WBTEST_CHECK(fabs(rms - want_rms) < 0.05 * want_rms && peak < WB_AUDIO_SYNTH_NOISE_AMPLITUDE * 1.05,
                 "synth: the noise is uniform with peak %.3f (rms %.5f, want %.5f; peak %.5f)",
                 WB_AUDIO_SYNTH_NOISE_AMPLITUDE, rms, want_rms, peak);
    WBTEST_CHECK(xpeak <= 0.91 + 1e-6 && xpeak > 0.5, "synth: the signal stays within +-0.91 (peak %.4f)", xpeak);
    free(res);
    wb_audio_free(&a);
    wb_audio_free(&b);
    wb_audio_free(&c);
    wb_audio_free(&e);

    rc = wb_audio_synth(&a, 0.25, WB_AUDIO_SYNTH_MIN_RATE_HZ, 1, 0);
    WBTEST_CHECK(rc == 0 && a.nsamples == WB_AUDIO_SYNTH_MIN_RATE_HZ / 4 &&
                     fabs(tone_amplitude(a.samples, a.nsamples, a.sample_rate_hz, 6300) - 0.10) < 0.002,
                 "synth: %d Hz still holds the 6300 Hz tone", WB_AUDIO_SYNTH_MIN_RATE_HZ);
    wb_audio_free(&a);

    struct {
        double s;
        int32_t rate;
    } badargs[] = {{0, 44100}, {-1, 44100}, {NAN, 44100}, {INFINITY, 44100}, {1e-9, 44100},
                   {1e9, 44100}, {1, 8000}, {1, WB_AUDIO_SYNTH_MIN_RATE_HZ - 1}, {1, WB_AUDIO_MAX_RATE_HZ + 1}};
    int refused = 0;
    for (size_t i = 0; i < sizeof badargs / sizeof badargs[0]; i++) {
        rc = wb_audio_synth(&a, badargs[i].s, badargs[i].rate, 1, 0);
        refused += rc == WB_EUSAGE && a.samples == NULL && strncmp(wb_error_message(), "synthetic audio: ", 17) == 0;
        if (rc == 0)
            wb_audio_free(&a);
    }
    WBTEST_CHECK(refused == (int)(sizeof badargs / sizeof badargs[0]),
                 "synth: bad durations and rates give WB_EUSAGE (%d of %zu)", refused,
                 sizeof badargs / sizeof badargs[0]);
}

static char tmp_paths[64][512];
static int ntmp;

/* Remember a path to remove at the end (removed in reverse, so files go before their folders). */
static const char *tmp_path(const char *dir, const char *name)
{
    /* dir may itself be an earlier entry of tmp_paths, so build the path aside first. */
    char path[sizeof tmp_paths[0] + 8];
    size_t len = strlen(dir);
    if (len + 1 + strlen(name) >= sizeof tmp_paths[0])
        len = 0;
    memcpy(path, dir, len);
    path[len] = '/';
    strcpy(path + len + 1, name);
    memcpy(tmp_paths[ntmp], path, sizeof tmp_paths[0] - 1);
    tmp_paths[ntmp][sizeof tmp_paths[0] - 1] = '\0';
    return tmp_paths[ntmp++];
}

static void write_file(const char *path, const void *p, size_t n)
{
    FILE *fp = fopen(path, "wb");
    if (!fp || fwrite(p, 1, n, fp) != n || fclose(fp) != 0) {
        fprintf(stderr, "test_audio: cannot write %s: %s\n", path, strerror(errno));
        exit(99);
    }
}

static void expect_read_reject(const char *path, const char *want)
{
    struct wb_audio a;
    int rc = wb_audio_read_wav(path, &a);
    WBTEST_CHECK(rc == WB_EINPUT && a.samples == NULL && msg_is(path, want), "reading %s is refused with \"%s\" (%s)",
                 path, want, wb_error_message());
}

static void expect_read_base(const char *path, const char *what)
{
    struct wb_audio a;
    int rc = wb_audio_read_wav(path, &a);
    int same = rc == 0 && a.nsamples == 8;
    for (int i = 0; same && i < 8; i++)
        same = a.samples[i] == (float)(base_values[i] / 32768.0);
    const char *slash = strrchr(path, '/');
    WBTEST_CHECK(same && strcmp(a.name, slash ? slash + 1 : path) == 0, "wb_audio_read_wav reads %s (rc %d: %s)", what,
                 rc, rc ? wb_error_message() : a.name);
    wb_audio_free(&a);
}

static int list_is(const char *const *paths, int npaths, const char *const *want, int nwant, const char *what)
{
    char **files = NULL;
    int n = -1;
    int rc = wb_audio_list_inputs(paths, npaths, &files, &n);
    int ok = rc == 0 && n == nwant && files && files[n] == NULL;
    for (int i = 0; ok && i < n; i++)
        ok = strcmp(files[i], want[i]) == 0;
    WBTEST_CHECK(ok, "wb_audio_list_inputs: %s (rc %d, %d files%s%s)", what, rc, n, rc ? ": " : "",
                 rc ? wb_error_message() : "");
    if (!ok && rc == 0)
        for (int i = 0; i < n; i++)
            printf("#   got %s\n", files[i]);
    wb_audio_free_list(&files, n);
    return ok && files == NULL;
}

static void test_files(void)
{
    const char *tmpdir = getenv("TMPDIR");
    char top[512];
    snprintf(top, sizeof top, "%s/wb_test_audio_XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    if (!mkdtemp(top)) {
        WBTEST_CHECK(0, "cannot make a temporary folder %s: %s", top, strerror(errno));
        return;
    }
    struct wbuf base = make_base();
    const char *good = tmp_path(top, "good.wav");
    write_file(good, base.p, base.n);
    expect_read_base(good, "a good file");

    expect_read_reject(top, "is a directory, not a WAV file");
    char missing[600];
    snprintf(missing, sizeof missing, "%s/missing.wav", top);
    expect_read_reject(missing, "cannot open: No such file or directory");
    const char *empty = tmp_path(top, "empty.wav");
    write_file(empty, "", 0);
    expect_read_reject(empty, "empty file (0 bytes)");
    const char *text = tmp_path(top, "text.wav");
    write_file(text, "hello, this is not audio\n", 25);
    expect_read_reject(text, "not a WAV file (no RIFF/WAVE header)");
    const char *cut = tmp_path(top, "cut.wav");
    write_file(cut, base.p, 20);
    expect_read_reject(cut, "'fmt ' chunk claims 16 bytes but only 0 remain");
    const char *cutdata = tmp_path(top, "cutdata.wav");
    write_file(cutdata, base.p, base.n - 3);
    expect_read_reject(cutdata, "data chunk claims 16 bytes but only 13 remain");
    expect_read_reject("/dev/null", "empty file (0 bytes)");
    struct wb_audio a;
    int rc = wb_audio_read_wav("", &a);
    WBTEST_CHECK(rc == WB_EINPUT && a.samples == NULL, "an empty path is refused: %s", wb_error_message());

    /* The read-ahead loader: the file's bytes exactly, and -1 (the error state untouched) where the
     * reader must read again itself for the message. */
    unsigned char *bytes = NULL;
    size_t nbytes = 0;
    rc = wb_audio_load_quiet(good, &bytes, &nbytes);
    WBTEST_CHECK(rc == 0 && nbytes == base.n && bytes && memcmp(bytes, base.p, base.n) == 0,
                 "wb_audio_load_quiet(%s) gives its %zu bytes (rc %d, %zu)", good, base.n, rc, nbytes);
    free(bytes);
    wb_error_set(WB_EINPUT, "before");
    const char *refused[] = {missing, top, empty};
    for (int i = 0; i < 3; i++) {
        rc = wb_audio_load_quiet(refused[i], &bytes, &nbytes);
        WBTEST_CHECK(rc == -1 && bytes == NULL && nbytes == 0 && strcmp(wb_error_message(), "before") == 0,
                     "wb_audio_load_quiet(%s) is -1 with nothing loaded and no message set (rc %d)", refused[i], rc);
    }

    if (geteuid() != 0) {
        const char *locked = tmp_path(top, "locked.wav");
        write_file(locked, base.p, base.n);
        chmod(locked, 0);
        expect_read_reject(locked, "cannot open: Permission denied");
    } else {
        WBTEST_SKIP("an unreadable file: root reads it, the check needs a non-root user");
    }

    /* A pipe has no size up front: process substitution such as <(sox ... -t wav -) reads like this. */
    const char *fifo = tmp_path(top, "fifo.wav");
    if (mkfifo(fifo, 0600) == 0) {
        unsigned char *fbytes = NULL;
        size_t fn = 0;
        WBTEST_CHECK(wb_audio_load_quiet(fifo, &fbytes, &fn) == -1 && fbytes == NULL,
                     "wb_audio_load_quiet(%s) leaves a FIFO to its reader, without opening it", fifo);
        fflush(stdout);
        pid_t pid = fork();
        if (pid == 0) {
            int fd = open(fifo, O_WRONLY);
            size_t off = 0;
            while (fd >= 0 && off < base.n) {
                ssize_t w = write(fd, base.p + off, base.n - off < 7 ? base.n - off : 7);
                if (w <= 0)
                    break;
                off += (size_t)w;
            }
            int ok = off == base.n;
            free(base.p);
            _exit(ok ? 0 : 1);
        }
        expect_read_base(fifo, "a named pipe");
        int status = 1;
        waitpid(pid, &status, 0);
        WBTEST_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the pipe writer finished");
    } else {
        WBTEST_CHECK(0, "mkfifo %s: %s", fifo, strerror(errno));
    }

    const char *lst = tmp_path(top, "list");
    mkdir(lst, 0700);
    const char *names[] = {"b.wav", "a.WAV", "d.Wav", "c.txt", ".hidden.wav", "._mac.wav", "e.wave", "wav"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        write_file(tmp_path(lst, names[i]), base.p, base.n);
    const char *sub = tmp_path(lst, "sub.wav");
    mkdir(sub, 0700);
    write_file(tmp_path(sub, "inner.wav"), base.p, base.n);
    const char *emptydir = tmp_path(top, "nothing");
    mkdir(emptydir, 0700);
    write_file(tmp_path(emptydir, "notes.txt"), "x", 1);

    char a_wav[600], b_wav[600], d_wav[600], c_txt[600], lst_slash[600];
    snprintf(a_wav, sizeof a_wav, "%s/a.WAV", lst);
    snprintf(b_wav, sizeof b_wav, "%s/b.wav", lst);
    snprintf(d_wav, sizeof d_wav, "%s/d.Wav", lst);
    snprintf(c_txt, sizeof c_txt, "%s/c.txt", lst);
    snprintf(lst_slash, sizeof lst_slash, "%s/", lst);
    {
        const char *in[1] = {lst};
        const char *want[3] = {a_wav, b_wav, d_wav};
        int ok = list_is(in, 1, want, 3, "a folder gives its .wav/.WAV/.Wav files sorted, without dot-files, "
                                          "subfolders or other extensions");
        WBTEST_CHECK(ok, "wb_audio_free_list sets the list to NULL");
    }
    {
        const char *in[1] = {lst_slash};
        const char *want[3] = {a_wav, b_wav, d_wav};
        list_is(in, 1, want, 3, "a folder with a trailing slash gives no double slash");
    }
    {
        const char *in[3] = {c_txt, lst, good};
        const char *want[5] = {c_txt, a_wav, b_wav, d_wav, good};
        list_is(in, 3, want, 5, "files are kept as given (any extension) and in argument order");
    }
    {
        char **files = (char **)1;
        int n = 7;
        const char *in[2] = {lst, missing};
        rc = wb_audio_list_inputs(in, 2, &files, &n);
        WBTEST_CHECK(rc == WB_EINPUT && files == NULL && n == 0 &&
                         msg_is(missing, "cannot use as input: No such file or directory"),
                     "wb_audio_list_inputs: a missing path is refused: %s", wb_error_message());
        const char *in2[1] = {emptydir};
        rc = wb_audio_list_inputs(in2, 1, &files, &n);
        WBTEST_CHECK(rc == WB_EINPUT && files == NULL && msg_is(emptydir, "no .wav files in this folder"),
                     "wb_audio_list_inputs: a folder without WAV files is refused: %s", wb_error_message());
        rc = wb_audio_list_inputs(NULL, 0, &files, &n);
        WBTEST_CHECK(rc == WB_EUSAGE && files == NULL, "wb_audio_list_inputs: no paths is a usage error: %s",
                     wb_error_message());
        wb_audio_free_list(NULL, 0);
        wb_audio_free_list(&files, 0);
    }

    for (int i = ntmp - 1; i >= 0; i--)
        remove(tmp_paths[i]);
    rmdir(top);
    ntmp = 0;
    free(base.p);
}

static unsigned char *slurp(const char *path, size_t *n)
{
    *n = 0;
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return NULL;
    size_t cap = 1 << 16, len = 0, got;
    unsigned char *p = malloc(cap);
    while ((got = fread(p + len, 1, cap - len, fp)) > 0) {
        len += got;
        if (len == cap)
            p = realloc(p, cap *= 2);
    }
    fclose(fp);
    *n = len;
    return p;
}

struct row {
    char file[256];
    int rate_hz, channels, bits, is_float;
    unsigned tag;
    double freq_hz, amplitude;
    long long nsamples;
};

static int read_manifest(const char *path, struct row *rows, int max)
{
    FILE *fp = fopen(path, "r");
    if (!fp)
        return -1;
    char line[1024];
    int n = 0;
    while (n < max && fgets(line, sizeof line, fp)) {
        if (line[0] == '#')
            continue;
        struct row *r = &rows[n];
        if (sscanf(line, "%255[^\t]\t%d\t%d\t%d\t%d\t%x\t%lf\t%lf\t%lld", r->file, &r->rate_hz, &r->channels, &r->bits,
                   &r->is_float, &r->tag, &r->freq_hz, &r->amplitude, &r->nsamples) == 9)
            n++;
    }
    fclose(fp);
    return n;
}

/* Decode every file make_wavs.sh wrote and compare it with the header it asked sox for and with sox's own
 * mono decoding in ref/. */
static void test_good_file(const char *dir, const struct row *r)
{
    char path[1024], ref[1200];
    if (snprintf(path, sizeof path, "%s/%s", dir, r->file) >= (int)sizeof path ||
        snprintf(ref, sizeof ref, "%s/ref/%s.f32", dir, r->file) >= (int)sizeof ref) {
        WBTEST_CHECK(0, "%s: path too long", r->file);
        return;
    }
    struct wb_audio a;
    int rc = wb_audio_read_wav(path, &a);
    WBTEST_CHECK(rc == 0 && a.sample_rate_hz == r->rate_hz && a.channels == r->channels && a.bits == r->bits &&
                     a.is_float == r->is_float && a.nsamples == r->nsamples &&
                     a.data_bytes == r->nsamples * r->channels * r->bits / 8 && strcmp(a.name, r->file) == 0,
                 "%s: %d Hz, %d ch, %d bits%s, %lld samples (got rc %d, %d Hz, %d ch, %d bits, %lld: %s)", r->file,
                 r->rate_hz, r->channels, r->bits, r->is_float ? " float" : "", r->nsamples, rc, a.sample_rate_hz,
                 a.channels, a.bits, (long long)a.nsamples, rc ? wb_error_message() : "ok");
    if (rc != 0)
        return;

    size_t nref = 0;
    unsigned char *p = slurp(ref, &nref);
    double maxdiff = INFINITY;
    if (p && nref == (size_t)a.nsamples * 4) {
        maxdiff = 0;
        for (int64_t i = 0; i < a.nsamples; i++) {
            const unsigned char *q = p + 4 * i;
            uint32_t u = (uint32_t)q[0] | ((uint32_t)q[1] << 8) | ((uint32_t)q[2] << 16) | ((uint32_t)q[3] << 24);
            float x;
            memcpy(&x, &u, 4);
            maxdiff = fmax(maxdiff, fabs((double)x - a.samples[i]));
        }
    }
    free(p);
    WBTEST_CHECK(maxdiff <= 1e-6, "%s: matches sox's mono decoding (max difference %.3g, %zu ref bytes)", r->file,
                 maxdiff, nref);

    if (r->freq_hz > 0) {
        double at = tone_amplitude(a.samples, a.nsamples, a.sample_rate_hz, r->freq_hz);
        double below = tone_amplitude(a.samples, a.nsamples, a.sample_rate_hz, r->freq_hz * 0.8);
        double above = tone_amplitude(a.samples, a.nsamples, a.sample_rate_hz, r->freq_hz * 1.25);
        double zc = zero_crossing_hz(a.samples, a.nsamples, a.sample_rate_hz);
        WBTEST_CHECK(fabs(zc - r->freq_hz) < 0.01 * r->freq_hz && at > 100 * fmax(below, above) &&
                         fabs(at - r->amplitude) < 0.03 * r->amplitude,
                     "%s: a %.0f Hz tone (zero crossings %.1f Hz; amplitude %.4f, want %.4f; neighbours %.2g)",
                     r->file, r->freq_hz, zc, at, r->amplitude, fmax(below, above));
    } else {
        float peak = 0;
        for (int64_t i = 0; i < a.nsamples; i++)
            peak = fmaxf(peak, fabsf(a.samples[i]));
        WBTEST_CHECK(peak > 0.01f && peak <= 1.0f, "%s: peak %.3f is sane", r->file, peak);
    }

    if (strncmp(r->file, "pipe_", 5) == 0) {
        size_t n = 0;
        unsigned char *raw = slurp(path, &n);
        uint32_t claimed = 0;
        for (size_t i = 12; raw && i + 8 <= n && i < 200; i++)
            if (memcmp(raw + i, "data", 4) == 0) {
                claimed = (uint32_t)raw[i + 4] | ((uint32_t)raw[i + 5] << 8) | ((uint32_t)raw[i + 6] << 16) |
                          ((uint32_t)raw[i + 7] << 24);
                break;
            }
        free(raw);
        WBTEST_CHECK(claimed > n, "%s: really claims more data than it holds (%u > %zu)", r->file,
                     (unsigned)claimed, n);
    }
    wb_audio_free(&a);
}

static int cmp_cstr(const void *x, const void *y) { return strcmp(*(const char *const *)x, *(const char *const *)y); }

static void test_dir(const char *dir)
{
    char path[1024];
    static struct row rows[256];
    snprintf(path, sizeof path, "%s/manifest.tsv", dir);
    int n = read_manifest(path, rows, 256);
    WBTEST_CHECK(n > 0, "%s lists the good files (%d)", path, n);
    if (n <= 0)
        return;

    /* The generator must keep covering every encoding the decoder claims. */
    int seen_bits[65] = {0}, seen_ch[65] = {0}, seen_ext = 0, seen_float = 0, seen_pcm = 0, seen_pipe = 0;
    int rates[5] = {8000, 22050, 44100, 48000, 96000}, seen_rate[5] = {0};
    for (int i = 0; i < n; i++) {
        test_good_file(dir, &rows[i]);
        if (rows[i].bits >= 0 && rows[i].bits <= 64)
            seen_bits[rows[i].bits]++;
        if (rows[i].channels >= 0 && rows[i].channels <= 64)
            seen_ch[rows[i].channels]++;
        seen_ext += rows[i].tag == 0xFFFE;
        seen_float += rows[i].tag == 3;
        seen_pcm += rows[i].tag == 1;
        seen_pipe += strncmp(rows[i].file, "pipe_", 5) == 0;
        for (int k = 0; k < 5; k++)
            seen_rate[k] += rows[i].rate_hz == rates[k];
    }
    WBTEST_CHECK(seen_bits[8] && seen_bits[16] && seen_bits[24] && seen_bits[32] && seen_bits[64] && seen_ch[1] &&
                     seen_ch[2] && seen_ch[6] && seen_ext && seen_float && seen_pcm && seen_pipe && seen_rate[0] &&
                     seen_rate[1] && seen_rate[2] && seen_rate[3] && seen_rate[4],
                 "the test files cover 8/16/24/32/64 bits, 1/2/6 channels, PCM/float/EXTENSIBLE, pipes and "
                 "8000..96000 Hz");

    char **files = NULL;
    int nf = 0;
    const char *in[1] = {dir};
    int rc = wb_audio_list_inputs(in, 1, &files, &nf);
    int ok = rc == 0 && nf == n;
    for (int i = 0; ok && i < nf; i++) {
        const char *base = strrchr(files[i], '/');
        ok = base && strncmp(files[i], dir, strlen(dir)) == 0 && (i == 0 || strcmp(files[i - 1], files[i]) < 0);
        int found = 0;
        for (int j = 0; ok && j < n; j++)
            found |= strcmp(base + 1, rows[j].file) == 0;
        ok = ok && found;
    }
    WBTEST_CHECK(ok,
                 "wb_audio_list_inputs(%s) gives exactly the %d manifest files, sorted, not bad/ or ref/ (rc %d, %d)",
                 dir, n, rc, nf);
    wb_audio_free_list(&files, nf);

    snprintf(path, sizeof path, "%s/bad/manifest.tsv", dir);
    FILE *fp = fopen(path, "r");
    WBTEST_CHECK(fp != NULL, "%s exists", path);
    if (!fp)
        return;
    char line[1024];
    int nbad = 0;
    char *badnames[64];
    while (nbad < 64 && fgets(line, sizeof line, fp)) {
        char file[256], want[512], full[1024];
        if (line[0] == '#' || sscanf(line, "%255[^\t]\t%511[^\n]", file, want) != 2)
            continue;
        snprintf(full, sizeof full, "%s/bad/%s", dir, file);
        expect_read_reject(full, want);
        badnames[nbad++] = strdup(full);
    }
    fclose(fp);
    snprintf(path, sizeof path, "%s/bad", dir);
    in[0] = path;
    rc = wb_audio_list_inputs(in, 1, &files, &nf);
    qsort(badnames, (size_t)nbad, sizeof badnames[0], cmp_cstr);
    ok = rc == 0 && nf == nbad;
    for (int i = 0; ok && i < nf; i++)
        ok = strcmp(files[i], badnames[i]) == 0;
    WBTEST_CHECK(ok, "wb_audio_list_inputs(%s) lists the %d refused files in byte order (rc %d, %d)", path, nbad, rc,
                 nf);
    wb_audio_free_list(&files, nf);
    for (int i = 0; i < nbad; i++)
        free(badnames[i]);
}

int main(int argc, char **argv)
{
    test_scaling();
    test_chunks();
    test_rejects();
    test_fuzz();
    test_check_nsamples();
    test_synth();
    test_files();
    if (argc < 2)
        WBTEST_CHECK(0, "no WAV folder given: run tests/unit/make_wavs.sh DIR, then test_audio DIR");
    else
        test_dir(argv[1]);
    return wbtest_done();
}
