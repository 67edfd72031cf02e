/* Test helper: a small input file written into a fresh temporary directory,
 * and its removal. */
#ifndef TEST_TMPFILE_H
#define TEST_TMPFILE_H

#include "test_main.h"

#include <glib.h>
#include <glib/gstdio.h>

/* The file NAME holding TEXT in a new temporary directory; its path (give it
 * back with tmpfile_remove). */
static inline char *tmpfile_with(const char *name, const char *text)
{
    char *dir = g_dir_make_tmp("shardsim-test-XXXXXX", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dir);
    char *path = g_build_filename(dir, name, NULL);
    CU_ASSERT_TRUE(g_file_set_contents(path, text, -1, NULL));
    g_free(dir);
    return path;
}

/* Removes the file, its directory, and frees the path. */
static inline void tmpfile_remove(char *path)
{
    char *dir = g_path_get_dirname(path);
    g_unlink(path);
    g_rmdir(dir);
    g_free(dir);
    g_free(path);
}

#endif
