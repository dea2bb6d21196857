package conformance

import (
	"bytes"
	"crypto/sha256"
	"encoding/base32"
	"encoding/binary"
	"errors"
	"math"
	"strings"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/guard"
	"nameservice.dev/nameservice/model"
)

var groupRules = group{name: "Rules", guarantee: "rules: watermarks never overflow, values Fluree cannot read and text that is no UTF-8 are refused, and nothing is written", cases: []testCase{
	{name: "WatermarkAtTheTopIsRefused", quick: true, run: rulesWatermarkTop},
	{name: "RetractAtTheLimitDoesNotWrap", run: rulesRetractAtLimit},
	{name: "ContentIDsFlureeCannotReadAreRefused", quick: true, run: rulesContentIDs},
	{name: "BranchCountOverU32IsRefused", run: rulesBranchCount},
	{name: "LoneSurrogateIsRefused", run: rulesLoneSurrogate},
	{name: "IDsSharingAFileStayApart", quick: true, run: rulesSharedFile},
}}

// wantRefused checks that err wraps ErrInvalidArgument and names want.
func (e *env) wantRefused(what string, err error, want string) {
	e.t.Helper()
	if !errors.Is(err, nameservice.ErrInvalidArgument) || !strings.Contains(err.Error(), want) {
		e.t.Errorf("%s: error = %.300v; want ErrInvalidArgument naming %q", what, err, want)
	}
}

func rulesWatermarkTop(e *env) {
	e.init("db")
	before := e.lookup("db")
	top := int64(math.MaxInt64)
	e.wantRefused("status at 2^63-1", second(e.ns.PushStatus(e.ctx, e.id("db"), ready, status(top, "ready", nil))), "status_v")
	e.wantRefused("config at 2^63-1", second(e.ns.PushConfig(e.ctx, e.id("db"), unborn, config(top, nameservice.Object{}))), "config_v")
	e.wantRefused("commit at 2^63-1", second(e.ns.PublishCommit(e.ctx, e.id("db"), top, "a")), "commit_t")
	e.wantRefused("index at 2^63-1", second(e.ns.PublishIndex(e.ctx, e.id("db"), top, "a")), "index_t")
	e.wantSame("db", before)
	rec := model.NewLedger(e.parseID("imported"), 1)
	*rec.Status = status(top, "ready", nil)
	e.wantRefused("import at 2^63-1", e.ns.Import(e.ctx, rec), "status_v")
	e.wantAbsent("imported")
}

func rulesRetractAtLimit(e *env) {
	e.init("db")
	limit := status(guard.MaxWatermark, "ready", nil)
	e.applied(limit)(e.ns.PushStatus(e.ctx, e.id("db"), ready, limit))
	e.must(e.ns.Retract(e.ctx, e.id("db")))
	if rec := e.lookup("db"); !rec.Retracted || rec.Status.V != math.MaxInt64 {
		e.t.Fatalf("retract at status_v %d: retracted %v at status_v %d, want true at %d", int64(guard.MaxWatermark), rec.Retracted, rec.Status.V, int64(math.MaxInt64))
	}
	e.listIDs(nameservice.ListOptions{IncludeRetracted: true}, "db")
}

// contentID returns a content ID (see contentIDOf) of n zero bytes.
func contentID(n, pad int) string { return contentIDOf(make([]byte, n), pad) }

// commitID returns a content ID as Fluree names commits, its digest the
// SHA-256 of seed: equal seeds, equal IDs.
func commitID(seed string) string {
	sum := sha256.Sum256([]byte(seed))
	return contentIDOf(sum[:], 0)
}

// contentIDOf returns the CIDv1 (dag-cbor, sha2-256 code) of digest in
// base32; pad > 0 writes its version varint in pad+1 bytes.
func contentIDOf(digest []byte, pad int) string {
	v := append(bytes.Repeat([]byte{0x80}, pad), 0)
	v[0] |= 1 // the version, 1
	b := binary.AppendUvarint(append(v, 0x71), 0x12)
	b = binary.AppendUvarint(b, uint64(len(digest)))
	b = append(b, digest...)
	return "b" + base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding).EncodeToString(b)
}

func rulesContentIDs(e *env) {
	e.init("db")
	before := e.lookup("db")
	e.wantRefused("non-minimal varint", second(e.ns.PublishCommit(e.ctx, e.id("db"), 1, contentID(32, 1))), "shortest form")
	e.wantRefused("65-byte digest", second(e.ns.PublishIndex(e.ctx, e.id("db"), 1, contentID(65, 0))), "65 bytes")
	e.wantRefused("config_id", second(e.ns.PushConfig(e.ctx, e.id("db"), unborn,
		config(1, nameservice.Object{"config_id": contentID(32, 2)}))), "config_id")
	e.wantSame("db", before)
	good := contentID(64, 0)
	e.applied(ref(good, 1))(e.ns.PublishCommit(e.ctx, e.id("db"), 1, good))
}

func rulesBranchCount(e *env) {
	rec := model.NewLedger(e.parseID("db"), 1)
	rec.Branches = guard.MaxBranches + 1
	e.wantRefused("branches 2^32", e.ns.Import(e.ctx, rec), "branches")
	e.wantAbsent("db")
	rec.Branches = guard.MaxBranches
	e.must(e.ns.Import(e.ctx, rec))
	if got := e.lookup("db").Branches; got != guard.MaxBranches {
		e.t.Fatalf("branches read back as %d, want %d", got, int64(guard.MaxBranches))
	}
}

func rulesLoneSurrogate(e *env) {
	e.init("db")
	before := e.lookup("db")
	if o, err := nameservice.ParseObject([]byte(`{"note":"a\udcffb"}`)); !errors.Is(err, nameservice.ErrInvalidArgument) || !strings.Contains(err.Error(), `\udcff`) {
		e.t.Errorf("ParseObject of a lone surrogate = %v, %v; want ErrInvalidArgument naming the escape", o, err)
	}
	// A Go string cannot hold a surrogate but as bytes that are no UTF-8.
	e.wantRefused("surrogate bytes", second(e.ns.PushStatus(e.ctx, e.id("db"), ready,
		status(2, "ready", nameservice.Object{"note": "a\xed\xb3\xbfb"}))), "UTF-8")
	e.wantSame("db", before)
}

// rulesSharedFile: x/y:main and x:y/main map to one file in the file
// layouts. Where they collide the second create is refused, and a lookup
// of it is not found, neither naming the first ID; elsewhere both are
// records. Either way no answer about one reads the other.
func rulesSharedFile(e *env) {
	first, second := e.id("x/y:main"), e.id("x:y/main")
	e.must(e.ns.Init(e.ctx, first))
	e.applied(ref("fluree:file://first/1", 1))(e.ns.PublishCommit(e.ctx, first, 1, "fluree:file://first/1"))
	before := e.lookup("x/y:main")
	err := e.ns.Init(e.ctx, second)
	switch {
	case err == nil:
		if rec := e.lookup("x:y/main"); !rec.Head.Unborn() {
			e.t.Fatalf("%s created beside %s reads the other's head: %s", second, first, js(rec))
		}
	case !errors.Is(err, nameservice.ErrAlreadyExists) || strings.Contains(err.Error(), "x/y:main"):
		e.t.Fatalf("create %s beside %s: %v; want success, or ErrAlreadyExists not naming the other", second, first, err)
	default:
		_, err := e.ns.Lookup(e.ctx, second)
		if !errors.Is(err, nameservice.ErrNotFound) || strings.Contains(err.Error(), "x/y:main") {
			e.t.Fatalf("lookup %s, refused beside %s: %v; want ErrNotFound not naming the other", second, first, err)
		}
		_, err = e.ns.PublishCommit(e.ctx, second, 2, "fluree:file://second/2")
		if !errors.Is(err, nameservice.ErrNotFound) || strings.Contains(err.Error(), "x/y:main") {
			e.t.Fatalf("publish to %s, refused beside %s: %v; want ErrNotFound not naming the other", second, first, err)
		}
	}
	e.wantSame("x/y:main", before)
}
