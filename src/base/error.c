/* error.c - error codes, their texts, and the thread-local detail message. */
#include "base/base.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

static _Thread_local char last_error[512];

int tess_error_set(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return code;
}

const char *tess_last_error(void) { return last_error; }

const char *tess_strerror(int code)
{
    switch (code) {
    case TESS_OK: return "success";
    case TESS_ERR_ARG: return "invalid argument";
    case TESS_ERR_OVERFLOW: return "size or offset overflows int64";
    case TESS_ERR_NOMEM: return "out of memory";
    case TESS_ERR_IO: return "I/O error";
    case TESS_ERR_NOSPACE: return "no space left on storage";
    case TESS_ERR_VIEW: return "illegal file view";
    case TESS_ERR_NOENT: return "no such file";
    case TESS_ERR_EXIST: return "file exists";
    case TESS_ERR_ACCESS: return "access denied";
    case TESS_ERR_DECODE: return "malformed encoded datatype";
    case TESS_ERR_UNSUPPORTED: return "operation not supported";
    case TESS_ERR_TRUNCATE: return "buffer too small";
    case TESS_ERR_INTERNAL: return "internal error";
    case TESS_ERR_QUOTA: return "storage quota exceeded";
    case TESS_ERR_READONLY: return "read-only storage";
    default: return "unknown error";
    }
}

int tessi_errno_code(int neg_errno)
{
    switch (-neg_errno) {
    case ENOMEM: return TESS_ERR_NOMEM;
    case ENOSPC: return TESS_ERR_NOSPACE;
    case EDQUOT: return TESS_ERR_QUOTA;
    case EROFS: return TESS_ERR_READONLY;
    case ENOENT: return TESS_ERR_NOENT;
    case EEXIST: return TESS_ERR_EXIST;
    case EACCES:
    case EPERM:
    case EBADF: return TESS_ERR_ACCESS;
    case EINVAL: return TESS_ERR_ARG;
    case EFBIG:
    case EOVERFLOW: return TESS_ERR_OVERFLOW;
    case ENOTSUP: return TESS_ERR_UNSUPPORTED;
    default: return TESS_ERR_IO;
    }
}
