package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"nameservice.dev/nameservice"
)

// action is what migrate does (or would do) to one record.
type action string

// The actions, in the order the summary prints them.
const (
	actCreate   action = "create"   // absent at the target: imported whole
	actSkip     action = "skip"     // identical record JSON at the target
	actAdvance  action = "advance"  // the target is behind: its concerns are moved forward
	actConflict action = "conflict" // the target is ahead or diverged: nothing is written
	actFailed   action = "failed"   // the source could not be read, or a write failed
)

var actions = []string{string(actCreate), string(actSkip), string(actAdvance), string(actConflict), string(actFailed)}

// step moves one concern of the target from its current value to the
// source's, by compare-and-set.
type step struct {
	concern  nameservice.Concern
	from, to nameservice.Value
}

// plan is the decision for one record. For actAdvance, steps are the
// concerns to move forward and retract, when set, says to retract the target
// afterwards, moving its status from retract.from to retract.to (status is
// then not among the steps).
type plan struct {
	action  action
	steps   []step
	retract *step
	reason  string // why, for actConflict
}

func conflict(format string, args ...any) plan {
	return plan{action: actConflict, reason: fmt.Sprintf(format, args...)}
}

// planRecord decides what to do to dst (nil when absent) to make it equal
// src, by the rules a live writer follows: only forward, only from the value
// read. Anything else is a conflict, and nothing of that record is written.
func planRecord(src, dst *nameservice.Record) plan {
	if dst == nil {
		return plan{action: actCreate}
	}
	ja, errA := json.Marshal(src)
	jb, errB := json.Marshal(dst)
	if errA == nil && errB == nil && bytes.Equal(ja, jb) { // identical record JSON
		return plan{action: actSkip}
	}
	if src.Kind != dst.Kind {
		return conflict("kinds differ: the source is a %s, the target a %s", src.Kind, dst.Kind)
	}
	if d := metaDiff(src, dst); d != "" {
		return conflict("%s (no operation can change it at the target)", d)
	}
	if dst.Retracted && !src.Retracted {
		return conflict("the target is retracted and the source is not")
	}
	p := plan{action: actAdvance}
	if src.Retracted && !dst.Retracted {
		s, t := *src.Status, *dst.Status
		if reason := retractProblem(s, t); reason != "" {
			return conflict("%s", reason)
		}
		p.retract = &step{concern: nameservice.Status, from: t, to: s}
	}
	for _, c := range []nameservice.Concern{nameservice.Head, nameservice.Index, nameservice.Status, nameservice.Config} {
		s, t := src.Value(c), dst.Value(c)
		if s == nil || t == nil || s.Equal(*t) || (c == nameservice.Status && p.retract != nil) {
			continue
		}
		if s.V <= t.V {
			return conflict("%s", behind(c, *s, *t))
		}
		p.steps = append(p.steps, step{concern: c, from: *t, to: *s})
	}
	if len(p.steps) == 0 && p.retract == nil {
		return conflict("the records are equal by value but their JSON differs")
	}
	return p
}

// behind explains why target value t cannot be moved to source value s.
func behind(c nameservice.Concern, s, t nameservice.Value) string {
	if s.V == t.V {
		return fmt.Sprintf("%s diverged at %s %d: source %s, target %s", c, c.Watermark(), s.V, s, t)
	}
	return fmt.Sprintf("%s: the target's %s %d is ahead of the source's %d", c, c.Watermark(), t.V, s.V)
}

// retractProblem says why retracting the target (status t) cannot end at
// the source's status s, or "". A retract pushes {state: retracted,
// retracted_at} at t.V+1; a source status above that is pushed afterwards.
func retractProblem(s, t nameservice.Value) string {
	if s.V <= t.V {
		return behind(nameservice.Status, s, t)
	}
	if s.V > t.V+1 || s.Equal(retractedStatus(t.V+1, s)) {
		return ""
	}
	return fmt.Sprintf("status: retracting the target moves status_v to %d with {state: retracted, retracted_at}, which cannot produce the source's %s", t.V+1, s)
}

// retractedStatus is the status a retract at status_v v leaves when its
// clock reads the source's retracted_at.
func retractedStatus(v int64, src nameservice.Value) nameservice.Value {
	at, _ := src.Payload.Int("retracted_at")
	return nameservice.StatusValue(v, "retracted", nameservice.Object{"retracted_at": json.Number(fmt.Sprint(at))})
}

// metaDiff names the first meta field (other than retracted) that differs.
func metaDiff(src, dst *nameservice.Record) string {
	diffs := []struct {
		field string
		same  bool
		s, t  any
	}{
		{"source_type", src.SourceType == dst.SourceType, src.SourceType, dst.SourceType},
		{"dependencies", slices.Equal(src.Dependencies, dst.Dependencies), strings.Join(src.Dependencies, ","), strings.Join(dst.Dependencies, ",")},
		{"created_at", src.CreatedAt == dst.CreatedAt, src.CreatedAt, dst.CreatedAt},
		{"source_branch", src.SourceBranch == dst.SourceBranch, src.SourceBranch, dst.SourceBranch},
		{"branches", src.Branches == dst.Branches, src.Branches, dst.Branches},
		{"branch_point", fmt.Sprint(src.BranchPoint) == fmt.Sprint(dst.BranchPoint), src.BranchPoint, dst.BranchPoint},
	}
	for _, d := range diffs {
		if !d.same {
			return fmt.Sprintf("%s differs: source %v, target %v", d.field, d.s, d.t)
		}
	}
	return ""
}
