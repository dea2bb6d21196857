package driverutil

import (
	"slices"
	"strconv"
	"strings"
)

// WriteIDs are the last three writes recorded in one part of a record (an
// item, a document, a concern), newest first, each as "ID@V": the write's
// ID (driver.Write) and the watermark it wrote. A write that knows no
// watermark records "ID@" and something else. "" is a free slot. A driver
// that records every write to the part here can recognise a write of its
// own after a lost answer (Has), and prove one never landed (NeverLanded).
type WriteIDs [3]string

// WriteTag is what a write with ID id that writes watermark v records.
func WriteTag(id string, v int64) string { return id + "@" + strconv.FormatInt(v, 10) }

// Push records tag as the newest write, dropping the oldest.
func (h *WriteIDs) Push(tag string) { h[0], h[1], h[2] = tag, h[0], h[1] }

// Has reports whether the write with ID id is among h, whatever watermark
// it recorded. Write IDs hold no '@', so the prefix "id@" is exact.
func (h WriteIDs) Has(id string) bool {
	return slices.ContainsFunc(h[:], func(s string) bool { return strings.HasPrefix(s, id+"@") })
}

// NeverLanded reports whether a part that holds watermark wm and write IDs
// h, of the life (incarnation) a write of watermark v was sent to, and not
// holding that write's ID (Has), proves that the write never landed. The
// caller vouches that within one life watermarks never decrease and every
// write is recorded in h. A write that landed then stays in h until three
// later writes, each at a watermark of at least v (above v where strict),
// push it out. So either of these is proof:
//   - wm is below v;
//   - a slot is free, or holds a write at a watermark below v (at v where
//     strict): it was written before a write at v could have been.
//
// strict is for concerns whose every write raises the watermark (head,
// status, config); an index may be written again at the same t.
func (h WriteIDs) NeverLanded(wm, v int64, strict bool) bool {
	if wm < v {
		return true
	}
	for _, s := range h {
		if s == "" {
			return true
		}
		i := strings.LastIndexByte(s, '@')
		if i < 0 {
			continue // written by something else: proves nothing
		}
		w, err := strconv.ParseInt(s[i+1:], 10, 64)
		if err == nil && (w < v || (w == v && strict)) {
			return true
		}
	}
	return false
}
