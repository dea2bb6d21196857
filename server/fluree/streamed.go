package fluree

import (
	"bufio"
	"log/slog"
	"net/http"
)

// streamedJSON writes a 200 JSON answer as it is made, through a buffer
// (whose first write error ends the answer). Until the buffer first fills,
// nothing is sent, so that a failure early on can still be answered with an
// error status; a failure after that can only cut the answer short, which
// leaves JSON that does not parse.
type streamedJSON struct {
	*bufio.Writer
	w    http.ResponseWriter
	sent bool // part of the answer went out
}

// streamBuffer is the buffer of a streamed answer.
const streamBuffer = 64 << 10

func newStreamedJSON(w http.ResponseWriter) *streamedJSON {
	sj := &streamedJSON{w: w}
	sj.Writer = bufio.NewWriterSize(sentFlag{sj}, streamBuffer)
	return sj
}

// sentFlag sends the status line before the first bytes of the answer.
type sentFlag struct{ sj *streamedJSON }

func (f sentFlag) Write(b []byte) (int, error) {
	if !f.sj.sent {
		f.sj.sent = true
		f.sj.w.Header().Set("Content-Type", "application/json")
		f.sj.w.WriteHeader(http.StatusOK)
	}
	return f.sj.w.Write(b)
}

// fail ends the answer after a failure: with answer (an error answer) when
// nothing was sent yet, else cut short (and logged).
func (sj *streamedJSON) fail(answer func(), log *slog.Logger) {
	if !sj.sent {
		sj.Reset(nil)
		answer()
		return
	}
	log.Warn("answer cut short by a failure of the backend")
}
