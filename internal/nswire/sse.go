package nswire

import (
	"bufio"
	"io"
	"net/http"
	"strings"
	"time"
)

// WriteTimeout bounds the write of one event: a client that stops reading
// is cut off instead of holding its stream (and its slot) forever.
const WriteTimeout = time.Minute

// SSEWriter writes a text/event-stream, flushing after every event.
type SSEWriter struct {
	w  http.ResponseWriter
	rc *http.ResponseController
}

// NewSSEWriter sets the headers of an event stream on w and returns a
// writer of its events. It returns nil when w cannot flush.
func NewSSEWriter(w http.ResponseWriter) *SSEWriter {
	f, ok := w.(http.Flusher)
	if !ok {
		return nil
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no") // keep nginx from buffering the stream
	w.WriteHeader(http.StatusOK)
	f.Flush()
	return &SSEWriter{w: w, rc: http.NewResponseController(w)}
}

// Event writes one event: "event:", "id:" (when id is not empty) and
// "data:" lines in that order, then a blank line.
func (s *SSEWriter) Event(name, id string, data []byte) error {
	var b strings.Builder
	if name != "" {
		b.WriteString("event: " + name + "\n")
	}
	if id != "" {
		b.WriteString("id: " + id + "\n")
	}
	for _, line := range strings.Split(string(data), "\n") {
		b.WriteString("data: " + line + "\n")
	}
	b.WriteString("\n")
	return s.raw(b.String())
}

// Comment writes a comment line (a keep-alive when text is empty).
func (s *SSEWriter) Comment(text string) error {
	if text == "" {
		return s.raw(":\n\n")
	}
	return s.raw(": " + strings.ReplaceAll(text, "\n", " ") + "\n\n")
}

func (s *SSEWriter) raw(str string) error {
	// Not every ResponseWriter supports deadlines (a test recorder).
	_ = s.rc.SetWriteDeadline(time.Now().Add(WriteTimeout))
	if _, err := io.WriteString(s.w, str); err != nil {
		return err
	}
	_ = s.rc.Flush() // an error shows at the next write, as with http.Flusher
	return nil
}

// SSEEvent is one event read by SSEReader.
type SSEEvent struct {
	Name string
	ID   string
	Data string
}

// SSEReader reads the events of a text/event-stream.
type SSEReader struct {
	sc *bufio.Scanner
}

// NewSSEReader returns a reader of the events in r; maxLine bounds one line.
func NewSSEReader(r io.Reader, maxLine int) *SSEReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), maxLine)
	return &SSEReader{sc: sc}
}

// Next returns the next event, skipping comments; io.EOF at the end.
func (r *SSEReader) Next() (SSEEvent, error) {
	var ev SSEEvent
	var data []string
	seen := false
	for r.sc.Scan() {
		line := r.sc.Text()
		if line == "" {
			if seen {
				ev.Data = strings.Join(data, "\n")
				return ev, nil
			}
			continue
		}
		if strings.HasPrefix(line, ":") {
			continue
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		seen = true
		switch field {
		case "event":
			ev.Name = value
		case "id":
			ev.ID = value
		case "data":
			data = append(data, value)
		}
	}
	if err := r.sc.Err(); err != nil {
		return ev, err
	}
	return ev, io.EOF
}
