package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/subscribe"
)

func init() {
	var prefix, state string
	var interval time.Duration
	commands["watch"] = &command{usage: "[ID | --prefix P] [--state FILE] [--interval D]", nargs: -1,
		flags: func(fs *flag.FlagSet) {
			fs.StringVar(&prefix, "prefix", "", "")
			fs.StringVar(&state, "state", "", "")
			fs.DurationVar(&interval, "interval", 0, "")
		},
		run: func(c *call) error {
			if len(c.args) > 1 || (len(c.args) == 1 && prefix != "") {
				return usagef("watch takes one ID or --prefix P")
			}
			if len(c.args) == 1 {
				id, err := nameservice.ParseID(c.args[0])
				if err != nil {
					return err
				}
				prefix = id.String()
			}
			return watch(c, prefix, state, interval)
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

// watch prints changes until interrupted. With --state FILE it resumes from
// the subscription map saved there and saves it after every event, so a
// restarted watch misses nothing.
func watch(c *call, prefix, state string, interval time.Duration) error {
	from, err := loadState(state)
	if err != nil {
		return err
	}
	sub, err := subscribe.Start(c.ctx, c.ns, subscribe.Options{Prefix: prefix, Interval: interval, From: from})
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
		if ev.ID.String() != prefix && !strings.HasPrefix(ev.ID.String(), prefix) {
			continue
		}
		printEvent(c, ev)
		if err := saveState(state, sub.Map()); err != nil {
			return err
		}
	}
}

func printEvent(c *call, ev nameservice.Event) {
	e := event{ID: ev.ID.String(), Deleted: ev.Deleted}
	if !ev.Deleted {
		e.Concern, e.Old, e.New = ev.Concern.String(), ev.Old, &ev.New
	}
	if c.json {
		c.printJSON(e)
		return
	}
	if ev.Deleted {
		fmt.Fprintf(c.stdout, "%s purged\n", e.ID)
		return
	}
	fmt.Fprintf(c.stdout, "%s %s %d -> %v\n", e.ID, e.Concern, e.Old, ev.New)
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
	var m subscribe.Map
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("--state %s: %w", path, err)
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
