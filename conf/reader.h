/*
 * conf/reader.h: how a config's text reaches inih.  The reader hands inih
 * one physical line at a time, counting lines so that every key has its
 * exact line number, and reports every malformed line with that number
 * (see reader.c for why inih's own reader is not used).
 */
#ifndef POSTERN_CONF_READER_H
#define POSTERN_CONF_READER_H

struct cf_build;

/*
 * inih's ini_reader over B->text (B->len bytes) from B->pos: copies the
 * next line into STR (NUM bytes), leading blanks dropped, and advances
 * B->pos and B->line.  A line too long for STR, holding a NUL byte, or of
 * no shape inih knows is reported with cfb_err() (and handed on empty
 * when too long or holding a NUL).  Returns STR, or NULL at the end.
 * STREAM is B.
 */
char *cfr_read_line(char *str, int num, void *stream);

/*
 * Read every section header of B->text before inih runs: an unknown or
 * repeated section, or a bad or duplicate session name, is reported once
 * with its line; each [session NAME] is added to B->sess in file order.
 */
void cfr_sections(struct cf_build *b);

#endif
