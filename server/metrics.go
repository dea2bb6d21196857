package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"nameservice.dev/nameservice/server/fluree"
)

// metrics are the server's Prometheus series, all prefixed nameservice_.
type metrics struct {
	requests       *prometheus.CounterVec
	latency        *prometheus.HistogramVec
	conflicts      *prometheus.CounterVec
	unknown        prometheus.Counter
	replays        prometheus.Counter
	authFailures   prometheus.Counter
	subscribers    prometheus.Gauge
	streamsRefused *prometheus.CounterVec
	idemBytes      prometheus.Gauge
	connsOpen      prometheus.Gauge
	connsRefused   *prometheus.CounterVec
}

func newMetrics(reg *prometheus.Registry) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "nameservice_http_requests_total", Help: "HTTP requests by route, method and status code.",
		}, []string{"route", "method", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "nameservice_http_request_duration_seconds", Help: "HTTP request latency by route (event streams excluded).",
			Buckets: []float64{.0001, .00025, .0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route"}),
		conflicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "nameservice_push_conflicts_total", Help: "Pushes not applied (stale or compare-and-set conflict), by concern.",
		}, []string{"concern"}),
		unknown: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "nameservice_unknown_outcomes_total", Help: "Writes answered with an unknown outcome.",
		}),
		replays: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "nameservice_idempotent_replays_total", Help: "Resent writes answered from the outcome cache.",
		}),
		authFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "nameservice_auth_failures_total", Help: "Requests refused with 401.",
		}),
		subscribers: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "nameservice_sse_subscribers", Help: "Event streams open now.",
		}),
		streamsRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "nameservice_sse_refused_total", Help: "Event streams refused, by the limit they met (max_streams, max_streams_per_principal).",
		}, []string{"reason"}),
		idemBytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "nameservice_idempotency_cache_bytes", Help: "Bytes held by the outcome cache of resent writes (keys and answers).",
		}),
		connsOpen: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "nameservice_connections_open", Help: "Connections open now (of an http.Server from HTTPServer).",
		}),
		connsRefused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "nameservice_connections_refused_total", Help: "Connections closed on arrival, by the limit they met (max_conns, max_conns_per_addr).",
		}, []string{"reason"}),
	}
	reg.MustRegister(m.requests, m.latency, m.conflicts, m.unknown, m.replays, m.authFailures, m.subscribers,
		m.streamsRefused, m.idemBytes, m.connsOpen, m.connsRefused)
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
