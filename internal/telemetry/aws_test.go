package telemetry_test

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/drivers/s3etag"
	"nameservice.dev/nameservice/internal/testing/testenv"
)

// TestAWSSpansAreChildren: on DynamoDB Local, each driver call's span has
// the AWS SDK's spans for its requests as children, and a failed condition
// shows as an event.
func TestAWSSpansAreChildren(t *testing.T) {
	endpoint := testenv.DynamoDBEndpoint(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	table := "ns-otel-" + testenv.RandomHex(4)
	r := newRecorder(t)
	ns, err := nameservice.Open(ctx, "dynamodb://"+table+"?region=us-east-1&endpoint="+url.QueryEscape(endpoint), r.options()...)
	must(t, err)
	defer ns.Close()
	must(t, ns.Provision(ctx))
	var d *dynamodb.Driver
	if !ns.As(&d) {
		t.Fatal("not a DynamoDB driver")
	}
	testenv.DropTable(t, d.Client(), table)
	r.spans.Reset()

	must(t, ns.Init(ctx, "books"))
	_, err = ns.PublishCommit(ctx, "books", 2, "c2")
	must(t, err)
	out, err := ns.PublishCommit(ctx, "books", 1, "c1")
	must(t, err)
	if out.Applied {
		t.Fatal("stale publish applied")
	}
	spans := r.spans.GetSpans()
	ours := map[string]string{} // span ID -> outcome
	for _, s := range spans {
		if a := attrs(s.Attributes); a["nameservice.backend"] == "dynamodb" {
			ours[s.SpanContext.SpanID().String()] = s.Name + "/" + a["nameservice.outcome"]
			if a["db.system.name"] != "aws.dynamodb" || a["db.namespace"] != table {
				t.Errorf("span %s: %v", s.Name, a)
			}
		}
	}
	if len(ours) != 3 {
		t.Fatalf("%d driver spans, want 3: %v", len(ours), ours)
	}
	children := map[string][]string{}
	for _, s := range spans {
		if strings.HasPrefix(s.Name, "DynamoDB.") {
			parent := s.Parent.SpanID().String()
			if ours[parent] == "" {
				t.Errorf("SDK span %s has no driver call as parent", s.Name)
			}
			children[ours[parent]] = append(children[ours[parent]], s.Name)
		}
	}
	for call, kids := range children {
		t.Logf("%s: %v", call, kids)
	}
	for _, call := range []string{"create " + table + "/applied", "update " + table + "/applied", "update " + table + "/stale"} {
		if len(children[call]) == 0 {
			t.Errorf("call %s has no SDK span under it (children: %v)", call, children)
		}
	}
	var sawCCF bool
	for _, s := range spans {
		for _, e := range s.Events {
			sawCCF = sawCCF || e.Name == "precondition failed"
		}
	}
	if !sawCCF {
		t.Error("the stale publish's ConditionalCheckFailed is not an event")
	}
}

// TestS3PreconditionSpans: on versitygw, a push over another client's
// write fails its If-Match with 412, reads again and applies: one span
// with both events, and the S3 SDK's requests as its children.
func TestS3PreconditionSpans(t *testing.T) {
	endpoint := testenv.S3Endpoint(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	client, err := s3etag.NewClient(ctx, s3etag.Config{Bucket: "x", Region: "us-east-1", Endpoint: endpoint, PathStyle: true})
	must(t, err)
	bucket := testenv.S3Bucket(t, client, "ns-otel-")
	u := "s3://" + bucket + "?path_style=true&region=us-east-1&endpoint=" + url.QueryEscape(endpoint)
	r := newRecorder(t)
	a, err := nameservice.Open(ctx, u, r.options()...)
	must(t, err)
	defer a.Close()
	b, err := nameservice.Open(ctx, u)
	must(t, err)
	defer b.Close()
	must(t, a.Init(ctx, "books"))
	_, err = a.PublishCommit(ctx, "books", 1, "c1") // a caches the object's ETag
	must(t, err)
	_, err = b.PublishCommit(ctx, "books", 2, "c2")
	must(t, err)
	r.spans.Reset()
	out, err := a.PublishCommit(ctx, "books", 3, "c3")
	must(t, err)
	if !out.Applied {
		t.Fatalf("not applied: %+v", out)
	}
	var call tracetest.SpanStub
	var sdk []string
	for _, s := range r.spans.GetSpans() {
		if attrs(s.Attributes)["nameservice.backend"] == "s3" {
			call = s
		}
	}
	if call.Name == "" {
		t.Fatal("no span of the push")
	}
	var events []string
	for _, e := range call.Events {
		events = append(events, e.Name+"/"+attrs(e.Attributes)["nameservice.backend.code"])
	}
	if strings.Join(events, ",") != "precondition failed/412,retry/" {
		t.Errorf("events %v, want a 412 then a retry", events)
	}
	for _, s := range r.spans.GetSpans() {
		if s.Parent.SpanID() == call.SpanContext.SpanID() {
			sdk = append(sdk, s.Name)
		}
	}
	if !slices.Contains(sdk, "S3.PutObject") || !slices.Contains(sdk, "S3.GetObject") {
		t.Errorf("the push's children %v, want the 412'd PutObject, the GetObject that read again and the PutObject that landed", sdk)
	}
	t.Logf("children of the push: %v", sdk)
}
