package remote

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/internal/nswire"
	"nameservice.dev/nameservice/model"
)

// maxCollectLine bounds one line of the collector's answer.
const maxCollectLine = 64 << 10

// Collect implements driver.Collector: the server runs the collector of
// its backend over opts.Prefix (the token must write every ID under it)
// and streams what it did. Objects are reported by record ID only: the
// server keeps its object names to itself. Collection is safe to repeat,
// so a lost answer is not resent: run it again.
func (d *Driver) Collect(ctx context.Context, opts driver.CollectOptions) (driver.CollectStats, error) {
	const op = "collect"
	if err := d.closed.Check(ctx, "remote: "+op); err != nil {
		return driver.CollectStats{}, err
	}
	body, _ := json.Marshal(nswire.CollectRequest{Prefix: opts.Prefix, OlderThanMS: opts.OlderThan.Milliseconds(), DryRun: opts.DryRun})
	req, err := d.newRequest(ctx, http.MethodPost, "/collect", body)
	if err != nil {
		return driver.CollectStats{}, fmt.Errorf("remote: %s: %w", op, err)
	}
	resp, err := d.client.Do(req)
	if err != nil {
		return driver.CollectStats{}, fmt.Errorf("remote: %s: %w", op, transportError(err))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
		return driver.CollectStats{}, (&response{status: resp.StatusCode, body: b}).err(op)
	}
	return readCollect(resp.Body, opts.Report)
}

// readCollect reads the collector's stream of lines, reporting each object,
// and returns the totals of its last line.
func readCollect(r io.Reader, report func(driver.Collected)) (driver.CollectStats, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), maxCollectLine)
	for sc.Scan() {
		var l nswire.CollectLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return driver.CollectStats{}, fmt.Errorf("remote: collect: %w: a line of the answer is no JSON: %v", model.ErrInternal, err)
		}
		switch {
		case l.Error != nil:
			return driver.CollectStats{}, fmt.Errorf("remote: %w", l.Error.ToDriverError())
		case l.Stats != nil:
			return *l.Stats, nil
		case report != nil:
			report(driver.Collected{ID: l.ID, Removed: l.Removed, Reason: l.Reason})
		}
	}
	if err := sc.Err(); err != nil {
		return driver.CollectStats{}, fmt.Errorf("remote: collect: %w: %v", model.ErrUnavailable, err)
	}
	return driver.CollectStats{}, fmt.Errorf("remote: collect: %w: the answer ended before its totals; run it again", model.ErrUnavailable)
}

var _ driver.Collector = (*Driver)(nil)
