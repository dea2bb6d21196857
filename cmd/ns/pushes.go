package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"

	"nameservice.dev/nameservice"
	"nameservice.dev/nameservice/model"
)

func init() {
	commands["init"] = idCommand("create ledger ID: head, index and config unborn, status v1 ready", "ns init mydb", "initialised",
		(*nameservice.NameService).Init)
	commands["init"].creates = true
	commands["publish-commit"] = &command{usage: "ID T ADDRESS", nargs: 3, ids: true,
		summary: "move the commit head of ID to ADDRESS at t T, when T is above the current commit_t",
		example: "ns publish-commit mydb 42 fluree:s3://bucket/commits/t42.json",
		run: func(c *call) error {
			t, err := parseT(c.args[1])
			if err != nil {
				return err
			}
			return c.printOutcome(c.ns.PublishCommit(c.ctx, c.args[0], t, c.args[2]))
		}}
	commands["publish-index"] = publishIndexCommand()
	commands["cas-ref"] = casRefCommand()
	commands["push-status"] = pushCommand("ID --expect-v V STATE [--meta JSON|@FILE|@-]",
		"set the status of ID to STATE (and --meta's fields) as status_v V+1, when it is at V",
		`ns push-status mydb --expect-v 1 indexing --meta '{"queue_depth":3}'`, nameservice.Status)
	commands["push-config"] = pushCommand("ID --expect-v V JSON|@FILE|@-",
		"set the config of ID to the JSON object as config_v V+1, when it is at V",
		`ns push-config mydb --expect-v 0 '{"default_context":"fluree:s3://b/ctx.json"}'`, nameservice.Config)
	commands["retract"] = idCommand("mark ID retracted: listings leave it out unless asked, its values stay", "ns retract mydb", "retracted",
		(*nameservice.NameService).Retract)
	commands["purge"] = idCommand("remove ID (its ID is free again); ns gc removes what purges leave", "ns purge mydb", "purged",
		(*nameservice.NameService).Purge)
	commands["create-graph-source"] = graphSourceCommand()
}

// idCommand is a command that runs op on one ID and then says verb and the
// ID.
func idCommand(summary, example, verb string, op func(*nameservice.NameService, context.Context, string) error) *command {
	return &command{usage: "ID", nargs: 1, ids: true, summary: summary, example: example,
		run: func(c *call) error {
			if err := op(c.ns, c.ctx, c.args[0]); err != nil {
				return err
			}
			return c.done(verb + " " + c.args[0])
		}}
}

func casRefCommand() *command {
	var none bool
	var expT int64
	var expAddr string
	return &command{usage: "ID head|index (--expect-none | --expect-t T --expect-address A) T ADDRESS", nargs: 4, ids: true, creates: true,
		summary: "compare-and-set the head or index of ID: --expect-none creates the ledger, --expect-t 0 expects it unborn",
		example: "ns cas-ref mydb head --expect-t 41 --expect-address fluree:s3://b/c/t41.json 42 fluree:s3://b/c/t42.json",
		flags: func(fs *flag.FlagSet) {
			fs.BoolVar(&none, "expect-none", false, "expect no record (create it)")
			fs.Int64Var(&expT, "expect-t", -1, "the expected t")
			fs.StringVar(&expAddr, "expect-address", "", "the expected address")
		},
		run: func(c *call) error {
			concern, err := model.ParseConcern(c.args[1])
			if err != nil || (concern != nameservice.Head && concern != nameservice.Index) {
				return usagef("ref %q is neither head nor index", c.args[1])
			}
			t, err := parseT(c.args[2])
			if err != nil {
				return err
			}
			var expected *nameservice.Value
			switch {
			case none && (expT >= 0 || expAddr != ""):
				return usagef("--expect-none excludes --expect-t and --expect-address")
			case none:
			case expT == 0 && expAddr == "":
				expected = &nameservice.Value{} // unborn
			case expT > 0 && expAddr != "":
				expected = new(nameservice.RefValue(expAddr, expT))
			default:
				return usagef("cas-ref needs --expect-none, --expect-t 0 (unborn), or --expect-t T with --expect-address A")
			}
			out, err := c.ns.CompareAndSetRef(c.ctx, c.args[0], concern, expected, nameservice.Ref{Address: c.args[3], T: t})
			if err == nil && none && !out.Applied && out.Current.Unborn() {
				fmt.Fprintf(c.stderr, "ns: %s exists, its %s unborn: --expect-none expects no record; --expect-t 0 expects an unborn %s\n", c.args[0], concern, concern)
			}
			return c.printOutcome(out, err)
		}}
}

// pushCommand builds push-status and push-config. The CLI takes only the
// expected watermark: it reads the current value and compare-and-sets from
// it when the watermark matches, so a concurrent change is still detected.
func pushCommand(usage, summary, example string, concern nameservice.Concern) *command {
	var expV int64
	var meta string
	return &command{usage: usage, nargs: 2, ids: true, summary: summary, example: example,
		flags: func(fs *flag.FlagSet) {
			fs.Int64Var(&expV, "expect-v", -1, "the expected watermark")
			if concern == nameservice.Status {
				fs.StringVar(&meta, "meta", "", "extra status fields, a JSON object")
			}
		},
		run: func(c *call) error {
			if expV < 0 {
				return usagef("push-%s needs --expect-v V (0 or more)", concern)
			}
			if expV == math.MaxInt64 {
				return usagef("--expect-v %d: %s cannot go above it", expV, concern.Watermark())
			}
			payload, err := pushPayload(concern, c.args[1], meta)
			if err != nil {
				return err
			}
			read, push := c.ns.StatusOf, c.ns.PushStatus
			if concern == nameservice.Config {
				read, push = c.ns.ConfigOf, c.ns.PushConfig
			}
			cur, err := read(c.ctx, c.args[0])
			if err != nil {
				return err
			}
			if cur.V != expV {
				return c.printOutcome(nameservice.Outcome{Current: cur}, nil)
			}
			return c.printOutcome(push(c.ctx, c.args[0], cur, nameservice.Value{V: expV + 1, Payload: payload}))
		}}
}

func pushPayload(concern nameservice.Concern, arg, meta string) (nameservice.Object, error) {
	if concern == nameservice.Config {
		return parseObject("config", arg)
	}
	p := nameservice.Object{}
	if meta != "" {
		m, err := parseObject("--meta", meta)
		if err != nil {
			return nil, err
		}
		if _, ok := m["state"]; ok {
			return nil, usagef("--meta holds \"state\": the STATE argument gives the state")
		}
		p = m
	}
	p["state"] = arg
	return p, nil
}

func graphSourceCommand() *command {
	var typ, cfg string
	var deps []string
	return &command{usage: "ID --type TYPE [--dep ID]... [--config JSON|@FILE|@-]", nargs: 1, ids: true, creates: true,
		summary:    "create graph source ID of TYPE over the ledgers --dep, or push its new --config",
		example:    `ns create-graph-source search --type db:Bm25Index --dep mydb --config '{"k1":1.2}'`,
		ownsConfig: true,
		flags: func(fs *flag.FlagSet) {
			deps = nil
			fs.StringVar(&typ, "type", "", "the graph source type, e.g. db:Bm25Index")
			fs.Func("dep", "a ledger the graph source depends on (repeatable)", func(s string) error {
				deps = append(deps, s)
				return nil
			})
			fs.StringVar(&cfg, "config", "", "the graph source config, a JSON object")
		},
		run: func(c *call) error {
			if typ == "" {
				return usagef("create-graph-source needs --type TYPE")
			}
			var config any
			if cfg != "" {
				o, err := parseObject("--config", cfg)
				if err != nil {
					return err
				}
				config = o
			}
			if err := c.ns.PublishGraphSource(c.ctx, c.args[0], typ, deps, config); err != nil {
				return err
			}
			return c.done("published graph source " + c.args[0])
		}}
}

// publishIndexCommand publishes an index, with named graphs when --graph is
// given: ADDRESS at T is then the default graph's index.
func publishIndexCommand() *command {
	var admin bool
	var graphs map[string]*nameservice.GraphIndex
	return &command{usage: "ID T ADDRESS [--admin] [--graph NAME=ADDRESS@T[:REV] | --graph NAME=null]...", nargs: 3, ids: true,
		summary: "move the index of ID to ADDRESS at t T (--admin: also at the current index_t, a rebuilt index)",
		example: "ns publish-index mydb 40 fluree:s3://bucket/index/t40.json",
		flags: func(fs *flag.FlagSet) {
			graphs = nil
			fs.BoolVar(&admin, "admin", false, "also publish at the current index_t (a rebuilt index)")
			fs.Func("graph", "a named graph's index, NAME=ADDRESS@T[:REV], or NAME=null for one not indexed yet (repeatable)", func(v string) error {
				if graphs == nil {
					graphs = map[string]*nameservice.GraphIndex{}
				}
				return parseGraph(v, graphs)
			})
		},
		run: func(c *call) error {
			t, err := parseT(c.args[1])
			if err != nil {
				return err
			}
			switch {
			case graphs != nil:
				g, given := graphs[nameservice.DefaultGraph]
				if !given {
					g = &nameservice.GraphIndex{Address: c.args[2], T: t}
					graphs[nameservice.DefaultGraph] = g
				}
				if g == nil || g.Address != c.args[2] || g.T != t {
					return usagef("--graph %s= must be ADDRESS at T, the index's own", nameservice.DefaultGraph)
				}
				publish := c.ns.PublishIndexGraphs
				if admin {
					publish = c.ns.AdminPublishIndexGraphs
				}
				return c.printOutcome(publish(c.ctx, c.args[0], graphs))
			case admin:
				return c.printOutcome(c.ns.AdminPublishIndex(c.ctx, c.args[0], t, c.args[2]))
			}
			return c.printOutcome(c.ns.PublishIndex(c.ctx, c.args[0], t, c.args[2]))
		}}
}

// parseGraph reads NAME=ADDRESS@T[:REV], or NAME=null for a graph not
// indexed yet, into graphs.
func parseGraph(v string, graphs map[string]*nameservice.GraphIndex) error {
	name, spec, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("--graph %q: want NAME=ADDRESS@T[:REV] or NAME=null", v)
	}
	if _, dup := graphs[name]; dup {
		return fmt.Errorf("--graph: graph %q given twice", name)
	}
	if spec == "null" {
		graphs[name] = nil
		return nil
	}
	i := strings.LastIndex(spec, "@")
	if i <= 0 {
		return fmt.Errorf("--graph %q: want NAME=ADDRESS@T[:REV]", v)
	}
	tRev, rev := spec[i+1:], "0"
	if j := strings.IndexByte(tRev, ':'); j >= 0 {
		tRev, rev = tRev[:j], tRev[j+1:]
	}
	t, err := strconv.ParseInt(tRev, 10, 64)
	if err != nil || t < 1 {
		return fmt.Errorf("--graph %q: T %q is not an integer of 1 or more", v, tRev)
	}
	r, err := strconv.ParseInt(rev, 10, 64)
	if err != nil || r < 0 {
		return fmt.Errorf("--graph %q: REV %q is not an integer of 0 or more", v, rev)
	}
	graphs[name] = &nameservice.GraphIndex{Address: spec[:i], T: t, Rev: r}
	return nil
}
