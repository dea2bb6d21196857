package jsonld

import (
	"encoding/json"
	"fmt"
	"strconv"

	"nameservice.dev/nameservice/model"
)

// generate returns the value of member name for this file, and false when
// the member is not written (not applicable, or at its default).
func (w *writer) generate(name string) (any, bool, error) {
	switch knownParts[name] {
	case Identity:
		v, ok := w.identity(name)
		return v, ok, nil
	case HeadPart:
		v, ok := w.head(name)
		return v, ok, nil
	case IndexPart:
		v, ok := w.index(name)
		return v, ok, nil
	case StatusPart:
		return w.status(name)
	case ConfigPart:
		return w.config(name)
	}
	return nil, false, nil
}

func number(n int64) json.Number { return json.Number(strconv.FormatInt(n, 10)) }

func (w *writer) identity(name string) (any, bool) {
	r := w.rec
	switch name {
	case "ledger":
		return map[string]any{"@id": r.ID.Name}, !w.graph()
	case "name":
		return r.ID.Name, w.graph()
	case "branch":
		return r.ID.Branch, true
	case "graphSourceDependencies":
		// Fluree's reader requires the list: in its dialect an absent one
		// is written empty and marked by dependenciesAbsent.
		if r.Dependencies == nil {
			return []string{}, w.graph() && w.Dialect == FlureeV4
		}
		return r.Dependencies, w.graph()
	case "dependenciesAbsent":
		return true, w.graph() && w.Dialect == FlureeV4 && r.Dependencies == nil
	case "createdAt":
		return number(r.CreatedAt), r.CreatedAt != 0
	case "retracted":
		// Only when the status alone would say otherwise.
		return r.Retracted, r.Retracted != (r.Status != nil && r.Status.State() == model.StateRetracted)
	case "sourceBranch":
		return r.SourceBranch, r.SourceBranch != ""
	case "branchPoint":
		return w.branchPoint(), r.SourceBranch != ""
	case "branches":
		return number(r.Branches), r.Branches != 0
	}
	return nil, false
}

func (w *writer) head(name string) (any, bool) {
	h := w.rec.Head
	if h == nil {
		return nil, false
	}
	ref, born := h.Ref()
	switch name {
	case "t":
		return number(h.V), true
	case "ledgerCommit":
		return map[string]any{"@id": ref.Address}, born && w.Dialect == Spec
	case "commitCid":
		return ref.Address, born && w.Dialect == FlureeV4
	}
	return nil, false
}

func (w *writer) index(name string) (any, bool) {
	ix := w.rec.Index
	if ix == nil {
		return nil, false
	}
	ref, born := ix.Ref()
	if !born {
		return nil, false
	}
	spec, v4 := w.Dialect == Spec, w.Dialect == FlureeV4
	switch name {
	case "ledgerIndex":
		if spec {
			return map[string]any{"@id": ref.Address, w.key("t"): number(ix.V)}, !w.graph()
		}
		return map[string]any{w.key("cid"): ref.Address, w.key("t"): number(ix.V)}, !w.graph()
	case "indexGraphs":
		if ref.Graphs == nil || w.graph() {
			return nil, false
		}
		b, err := json.Marshal(ix.Payload["graphs"])
		return map[string]any{"@value": string(b)}, err == nil
	case "indexAddress":
		return ref.Address, w.graph() && spec
	case "indexT":
		return number(ix.V), w.graph() && spec
	case "graphSourceIndex":
		return map[string]any{"@type": w.key("ContentId"), w.key("graphSourceIndexCid"): ref.Address}, w.graph() && v4
	case "graphSourceIndexT":
		return number(ix.V), w.graph() && v4
	}
	return nil, false
}

func (w *writer) status(name string) (any, bool, error) {
	s := w.rec.Status
	if s == nil {
		return nil, false, nil
	}
	switch name {
	case "status":
		state, ok := s.Payload["state"].(string)
		if !ok {
			return nil, false, fmt.Errorf("status has no string state")
		}
		return state, true, nil
	case "statusV":
		return number(s.V), w.Dialect == Spec || !w.graph() || s.V != 1, nil
	case "statusMeta":
		meta := s.Payload.Clone()
		delete(meta, "state")
		return meta, len(meta) > 0, nil
	}
	return nil, false, nil
}

func (w *writer) config(name string) (any, bool, error) {
	c := w.rec.Config
	if c == nil {
		return nil, false, nil
	}
	if name == "configV" {
		return number(c.V), w.Dialect == Spec || !w.graph() || c.V != 1, nil
	}
	if w.graph() {
		return w.graphConfig(name)
	}
	if c.Payload == nil {
		return nil, false, nil
	}
	switch name {
	case "defaultContextCid", "configCid":
		s, ok := c.Payload[configKeys[name]].(string)
		return s, ok, nil
	case "configMeta":
		meta := w.configMeta()
		return meta, len(meta) > 0, nil
	}
	return nil, false, nil
}

// configMeta is the ledger config less the keys with members of their own:
// default_context and config_id when they are strings.
func (w *writer) configMeta() model.Object {
	p := w.rec.Config.Payload
	meta := p.Clone()
	for _, k := range configKeys {
		if _, ok := p[k].(string); ok {
			delete(meta, k)
		}
	}
	return meta
}

func (w *writer) graphConfig(name string) (any, bool, error) {
	if name != "graphSourceConfig" {
		return nil, false, nil
	}
	p := w.rec.Config.Payload
	if p == nil {
		// Fluree v4 requires the member: an unborn config is "{}" at configV 0.
		return map[string]any{"@value": "{}"}, w.Dialect == FlureeV4, nil
	}
	text, err := p.MarshalJSON()
	if err != nil {
		return nil, false, err
	}
	return map[string]any{"@value": string(text)}, true, nil
}

// branchPoint is Fluree's {source, commitCid, t}, in its member order: t 0
// and no commitCid for a branch created at its source's head.
func (w *writer) branchPoint() json.RawMessage {
	r := w.rec
	m := []member{{key: w.key("source"), raw: mustJSON(r.SourceBranch)}}
	var t int64
	if bp := r.BranchPoint; bp != nil {
		m = append(m, member{key: w.key("commitCid"), raw: mustJSON(bp.Address)})
		t = bp.T
	}
	return objectJSON(append(m, member{key: w.key("t"), raw: mustJSON(number(t))}))
}

// sameBranchPoint reports whether the record's source and branch point are
// what prev's file says.
func (w *writer) sameBranchPoint() bool {
	a, b := w.rec.BranchPoint, w.Prev.BranchPoint
	return w.rec.SourceBranch == w.Prev.SourceBranch && (a == nil) == (b == nil) && (a == nil || *a == *b)
}
