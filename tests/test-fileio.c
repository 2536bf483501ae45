/*
 * test-fileio.c - the shared file and text helpers: atomic writes (src/fileio.h) and UTF-8
 * (src/utf8.h).
 */
#include "fileio.h"
#include "testutil.h"
#include "utf8.h"

#include <errno.h>
#include <sys/stat.h>

static void tmp_file(char *buf, size_t size, const char *name) {
    const char *dir = getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp";
    snprintf(buf, size, "%s/pipit-test-fileio-%ld-%s", dir, (long)getpid(), name);
}

static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    static char buf[256];
    size_t n = fread(buf, 1, sizeof(buf) - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void test_atomic_write(void **state) {
    (void)state;
    char path[512];
    tmp_file(path, sizeof(path), "a.txt");
    struct fileio_tmp w;
    assert_true(fileio_begin(&w, path));
    assert_true(fileio_write(&w, "first", 5));
    /* nothing at the target until the commit */
    struct stat sb;
    assert_int_not_equal(stat(path, &sb), 0);
    assert_true(fileio_commit(&w, true, FILEIO_DURABLE));
    assert_string_equal(slurp(path), "first");
    assert_int_not_equal(stat(w.tmp, &sb), 0); /* the temp file is gone */

    /* a failed write (ok = false) leaves the old file byte for byte and no temp file */
    assert_true(fileio_begin(&w, path));
    assert_true(fileio_write(&w, "second, half", 12));
    assert_false(fileio_commit(&w, false, FILEIO_DURABLE));
    assert_string_equal(slurp(path), "first");
    assert_int_not_equal(stat(w.tmp, &sb), 0);

    /* a disposable commit replaces it too */
    assert_true(fileio_begin(&w, path));
    assert_true(fileio_write(&w, "third", 5));
    assert_true(fileio_commit(&w, true, FILEIO_DISPOSABLE));
    assert_string_equal(slurp(path), "third");
    remove(path);

    /* a directory that does not exist, a path that does not fit, misuse */
    char bad[512];
    tmp_file(bad, sizeof(bad), "no-such-dir/x.txt");
    assert_false(fileio_begin(&w, bad));
    assert_false(fileio_commit(&w, true, FILEIO_DURABLE));
    char longp[5000];
    memset(longp, 'a', sizeof(longp) - 1);
    longp[sizeof(longp) - 1] = '\0';
    assert_false(fileio_begin(&w, longp));
    assert_int_equal(errno, ENAMETOOLONG);
    assert_false(fileio_begin(&w, ""));
    assert_false(fileio_begin(NULL, path));
    assert_false(fileio_commit(NULL, true, FILEIO_DURABLE));
    assert_false(fileio_write(NULL, "x", 1));
}

static void test_fnv1a(void **state) {
    (void)state;
    /* the published FNV-1a 64 test vectors */
    assert_true(fileio_fnv1a(FILEIO_FNV_OFFSET, "", 0) == 0xcbf29ce484222325ull);
    assert_true(fileio_fnv1a(FILEIO_FNV_OFFSET, "a", 1) == 0xaf63dc4c8601ec8cull);
    assert_true(fileio_fnv1a(FILEIO_FNV_OFFSET, "foobar", 6) == 0x85944171f73967e8ull);
    /* continuing equals hashing the whole */
    uint64_t h = fileio_fnv1a(FILEIO_FNV_OFFSET, "foo", 3);
    assert_true(fileio_fnv1a(h, "bar", 3) == 0x85944171f73967e8ull);
}

static void test_utf8(void **state) {
    (void)state;
    const unsigned char *u;
    u = (const unsigned char *)"a";
    assert_int_equal(utf8_seq_len(u, 1), 1);
    u = (const unsigned char *)"\xc3\xa9"; /* é */
    assert_int_equal(utf8_seq_len(u, 2), 2);
    assert_int_equal(utf8_seq_len(u, 1), 0);   /* truncated */
    u = (const unsigned char *)"\xe2\x82\xac"; /* € */
    assert_int_equal(utf8_seq_len(u, 3), 3);
    u = (const unsigned char *)"\xf0\x9f\x93\xb7"; /* camera emoji */
    assert_int_equal(utf8_seq_len(u, 4), 4);
    assert_int_equal(utf8_seq_len((const unsigned char *)"\xc0\xaf", 2), 0);     /* overlong */
    assert_int_equal(utf8_seq_len((const unsigned char *)"\xed\xa0\x80", 3), 0); /* surrogate */
    assert_int_equal(utf8_seq_len((const unsigned char *)"\xf4\x90\x80\x80", 4), 0);
    assert_int_equal(utf8_seq_len((const unsigned char *)"\x80", 1), 0); /* continuation */
    assert_int_equal(utf8_seq_len(u, 0), 0);
    assert_int_equal(utf8_char_len((const unsigned char *)"\n", 1, true), 1);
    assert_int_equal(utf8_char_len((const unsigned char *)"\n", 1, false), 0);
    assert_int_equal(utf8_char_len((const unsigned char *)"\x01", 1, true), 0);

    assert_true(utf8_valid("caf\xc3\xa9", 5));
    assert_false(utf8_valid("caf\xc3", 4));
    assert_true(utf8_valid("", 0));

    const char *s = "ab\xe2\x82\xac"
                    "cd"; /* a b € c d */
    assert_int_equal(utf8_boundary(s, 1), 1);
    assert_int_equal(utf8_boundary(s, 3), 2); /* inside the euro sign: back to its start */
    assert_int_equal(utf8_boundary(s, 4), 2);
    assert_int_equal(utf8_boundary(s, 5), 5);
    assert_int_equal(utf8_count(s, strlen(s)), 5);

    char buf[16];
    snprintf(buf, sizeof(buf), "%s", s);
    utf8_cut(buf, 4);
    assert_string_equal(buf, "ab");
    snprintf(buf, sizeof(buf), "%s", s);
    utf8_cut(buf, 100);
    assert_string_equal(buf, s);

    snprintf(buf, sizeof(buf), "ok\x01\xe2\x82");
    utf8_sanitize(buf);
    assert_string_equal(buf, "ok???");

    /* encoding (the fast decoder's GBNF reader and automaton): every length, each edge */
    const struct {
        uint32_t cp;
        const char *enc;
    } enc[] = {{0x41, "A"},
               {0x7F, "\x7f"},
               {0x80, "\xc2\x80"},
               {0xE9, "\xc3\xa9"},
               {0x7FF, "\xdf\xbf"},
               {0x800, "\xe0\xa0\x80"},
               {0x20AC, "\xe2\x82\xac"},
               {0xFFFF, "\xef\xbf\xbf"},
               {0x10000, "\xf0\x90\x80\x80"},
               {0x1F4F7, "\xf0\x9f\x93\xb7"},
               {0x10FFFF, "\xf4\x8f\xbf\xbf"}};
    for (size_t i = 0; i < sizeof(enc) / sizeof(enc[0]); i++) {
        unsigned char out[4];
        size_t n = utf8_encode(enc[i].cp, out);
        assert_int_equal(n, strlen(enc[i].enc));
        assert_memory_equal(out, enc[i].enc, n);
        assert_int_equal(utf8_seq_len(out, n), n);
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_atomic_write),
        cmocka_unit_test(test_fnv1a),
        cmocka_unit_test(test_utf8),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
