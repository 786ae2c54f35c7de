/*
 * sidecar/learn.h: postern-sidecar run --learn, the sidecar's side: a
 * memory file the engine writes its learn summary into when it stops
 * (px_engine_opts.learn_fd, proxy/policy/learn.h), and what run does with it once
 * CMD has exited and the engine is gone: print it on stderr, or write it
 * to the file --learn=FILE names.
 */
#ifndef POSTERN_SIDECAR_LEARN_H
#define POSTERN_SIDECAR_LEARN_H

/* A new, empty memory file (close-on-exec, so CMD never holds it), or a
 * negative errno. */
int sc_learn_open(void);

/*
 * The block the engine left in FD (sc_learn_open()), made ready for CONFIG
 * (the config run served; NULL: the built-in default, whose text then
 * comes first with the learned items in its [defaults], so that the whole
 * passes `run --check -c FILE` and serves `run -c FILE`): on stderr, with
 * the same items as --allow flags on one line, or, FILE not NULL, written
 * to FILE atomically (a temporary file renamed over it, mode 0644; an
 * existing FILE is replaced, and run says so), with lines on stderr
 * saying where and the run --check and run commands that use it.  Returns 0 or a negative errno (told on stderr).  FD is
 * left open.
 */
int sc_learn_finish(int fd, const char *file, const char *config);

#endif
