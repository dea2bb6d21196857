package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"nameservice.dev/nameservice/server/fluree"
)

// metrics are the server's Prometheus series, all prefixed nameservice_.
type metrics struct {
	requests                     *prometheus.CounterVec
	latency                      *prometheus.HistogramVec
	conflicts                    *prometheus.CounterVec
	unknown, replays             prometheus.Counter
	authFailures, streamsDropped prometheus.Counter
	subscribers, upstreams       prometheus.Gauge
	streamsRefused, connsRefused *prometheus.CounterVec
	idemBytes, connsOpen         prometheus.Gauge
}

func newMetrics(reg *prometheus.Registry) *metrics {
	f := promauto.With(reg)
	counter := func(name, help string) prometheus.Counter {
		return f.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
	}
	gauge := func(name, help string) prometheus.Gauge {
		return f.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
	}
	vec := func(name, help, label string) *prometheus.CounterVec {
		return f.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{label})
	}
	m := &metrics{
		requests: f.NewCounterVec(prometheus.CounterOpts{Name: "nameservice_http_requests_total",
			Help: "HTTP requests by route, method and status code."}, []string{"route", "method", "code"}),
		latency: f.NewHistogramVec(prometheus.HistogramOpts{Name: "nameservice_http_request_duration_seconds",
			Help:    "HTTP request latency by route (event streams excluded).",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route"}),
		conflicts: vec("nameservice_push_conflicts_total",
			"Pushes not applied (stale or compare-and-set conflict), by concern.", "concern"),
		unknown: counter("nameservice_unknown_outcomes_total", "Writes answered with an unknown outcome."),
		replays: counter("nameservice_idempotent_replays_total",
			"Resent writes answered from the outcome cache."),
		authFailures: counter("nameservice_auth_failures_total", "Requests refused with 401."),
		subscribers:  gauge("nameservice_sse_subscribers", "Event streams open now."),
		streamsRefused: vec("nameservice_sse_refused_total",
			"Event streams refused, by the limit they met (max_streams, max_streams_per_principal).", "reason"),
		streamsDropped: counter("nameservice_sse_dropped_total",
			"Event streams ended because their client did not keep up."),
		upstreams: gauge("nameservice_watch_upstreams",
			"Watches of the backend running now, each shared by the streams on its key."),
		idemBytes: gauge("nameservice_idempotency_cache_bytes",
			"Bytes held by the outcome cache of resent writes (keys and answers)."),
		connsOpen: gauge("nameservice_connections_open",
			"Connections open now (of an http.Server from HTTPServer)."),
		connsRefused: vec("nameservice_connections_refused_total",
			"Connections closed on arrival, by the limit they met (max_conns, max_conns_per_addr).", "reason"),
	}
	// A caller's own registry may already hold the process collectors.
	_ = reg.Register(collectors.NewGoCollector())
	_ = reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) observe(route, method string, status int, d time.Duration) {
	m.requests.WithLabelValues(route, method, strconv.Itoa(status)).Inc()
	if status != http.StatusOK || (route != "GET /ns/v1/watch" && route != fluree.EventsRoute) {
		m.latency.WithLabelValues(route).Observe(d.Seconds())
	}
}
