package telemetry_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/driver"
	"nameservice.dev/nameservice/drivers/dynamodb"
	"nameservice.dev/nameservice/internal/testenv"
)

// TestAWSSpansAreChildren: on DynamoDB Local, each driver call's span has
// the AWS SDK's spans for its requests as children, and a failed condition
// shows as an event.
func TestAWSSpansAreChildren(t *testing.T) {
	endpoint := testenv.DynamoDBEndpoint(t)
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	table := "ns-otel-" + testenv.RandomHex(4)
	r := newRecorder(t)
	ns, err := nameservice.Open(ctx, "dynamodb://"+table+"?region=us-east-1&endpoint="+url.QueryEscape(endpoint), r.options()...)
	must(t, err)
	defer ns.Close()
	p := ns.Driver().(driver.Provisioner)
	must(t, p.Provision(ctx))
	testenv.DropTable(t, ns.Driver().(*dynamodb.Driver).Client(), table)
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
