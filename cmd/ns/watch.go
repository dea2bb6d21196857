package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/internal/jsonx"
	"nameservice.dev/nameservice/internal/text"
	"nameservice.dev/nameservice/subscribe"
)

func init() {
	var prefix, state, concerns, kind string
	var interval time.Duration
	commands["watch"] = &command{usage: "[ID | --prefix P] [--concerns head,index,status,config] [--kind ledger|graph_source] [--state FILE] [--interval D]", nargs: -1, ids: true,
		summary: "print every change until interrupted: a line on a terminal, JSON lines when piped (--state resumes after a restart)",
		example: "ns watch --prefix tenant-eu/ --state /var/lib/ns-watch.json",
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&prefix, "prefix", "", "only IDs starting with P")
			fs.StringVar(&concerns, "concerns", "", "only changes of these concerns, comma-separated (default: all; a purge always)")
			fs.StringVar(&kind, "kind", "", "only records of this kind: ledger or graph_source")
			fs.StringVar(&state, "state", "", "file to keep what was seen, to resume after a restart")
			fs.DurationVar(&interval, "interval", nameservice.DefaultWatchInterval, "poll interval when the backend has no change feed")
		},
		run: func(c *call) error {
			if len(c.args) > 1 || (len(c.args) == 1 && prefix != "") {
				return usagef("watch takes one ID or --prefix P")
			}
			one := "" // the one ID watched, when given
			if len(c.args) == 1 {
				id, err := nameservice.ParseID(c.args[0])
				if err != nil {
					return err
				}
				prefix, one = id.String(), id.String()
			}
			opts := subscribe.Options{Prefix: prefix, Interval: interval, Kind: nameservice.Kind(kind)}
			var err error
			if opts.Concerns, err = nameservice.ParseConcerns(concerns); err != nil {
				return usagef("--concerns: %v", err)
			}
			if kind != "" && !opts.Kind.Valid() {
				return usagef("--kind %q is neither ledger nor graph_source", text.Clip(kind, 40))
			}
			return watch(c, opts, one, state)
		}}
}

// event is the JSON line ns watch prints for a change.
type event struct {
	ID      string             `json:"id"`
	Concern string             `json:"concern,omitempty"`
	Old     int64              `json:"old"`
	New     *nameservice.Value `json:"new,omitempty"`
	Deleted bool               `json:"deleted,omitempty"`
}

// watch prints changes until interrupted, of record one alone when it is
// not "" (the subscription follows its ID as a prefix, which other IDs
// may begin with). With --state FILE it resumes from the subscription map
// saved there and saves it after every event, so a restarted watch misses
// nothing.
func watch(c *call, opts subscribe.Options, one, state string) error {
	from, err := loadState(state)
	if err != nil {
		return err
	}
	opts.From = from
	sub, err := subscribe.Start(c.ctx, c.ns, opts)
	if err != nil {
		return err
	}
	for {
		ev, err := sub.Next(c.ctx)
		switch {
		case err == nil:
		case c.ctx.Err() != nil || errors.Is(err, subscribe.ErrEnded):
			return nil // interrupted: the state file holds every event printed
		default:
			return err
		}
		if !strings.HasPrefix(ev.ID.String(), opts.Prefix) || one != "" && ev.ID.String() != one {
			continue
		}
		e := event{ID: ev.ID.String(), Deleted: ev.Deleted}
		if !ev.Deleted {
			e.Concern, e.Old, e.New = ev.Concern.String(), ev.Old, &ev.New
		}
		switch {
		case !c.human(): // piped or --json: a JSON line, as list and lookup print
			_ = c.printJSON(e)
		case ev.Deleted:
			fmt.Fprintf(c.stdout, "%s purged\n", e.ID)
		default:
			fmt.Fprintf(c.stdout, "%s %s %d -> %v\n", e.ID, e.Concern, e.Old, ev.New)
		}
		if err := saveState(state, sub.Map()); err != nil {
			return err
		}
	}
}

func loadState(path string) (*subscribe.Map, error) {
	if path == "" {
		return nil, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	m, err := parseState(b)
	if err != nil {
		return nil, fmt.Errorf("--state %s: %w", path, err)
	}
	return m, nil
}

// parseState reads a subscription map strictly: a repeated key, bad UTF-8,
// an unknown field, a key that is not a normalised ID, an unknown kind or a
// negative watermark makes the file corrupt (resuming from a guess could
// miss events), with an error wrapping ErrInvalidArgument.
func parseState(b []byte) (*subscribe.Map, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: not a subscription map: %s", nameservice.ErrInvalidArgument, fmt.Sprintf(format, args...))
	}
	if _, err := jsonx.Decode(b); err != nil {
		return nil, bad("%v", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var m subscribe.Map
	if err := dec.Decode(&m); err != nil {
		return nil, bad("%v", err)
	}
	for k, w := range m.Subscriptions {
		id, err := nameservice.ParseID(k)
		if err != nil {
			return nil, bad("%v", err)
		}
		if id.String() != k {
			return nil, bad("key %q is not in the normalised form %q", k, id.String())
		}
		if !w.Kind.Valid() {
			return nil, bad("%s: kind %q", k, text.Clip(string(w.Kind), 40))
		}
		if w.CommitT < 0 || w.IndexT < 0 || w.StatusV < 0 || w.ConfigV < 0 {
			return nil, bad("%s: a negative watermark", k)
		}
	}
	return &m, nil
}

// saveState writes the map through a temporary file and a rename, so a
// crash leaves the old state or the new, never half of one.
func saveState(path string, m subscribe.Map) error {
	if path == "" {
		return nil
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
