package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/julienschmidt/httprouter"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are the HTTP-level Prometheus series.
type metrics struct {
	requests *prometheus.CounterVec
	latency  *prometheus.HistogramVec
}

func newMetrics(reg *prometheus.Registry) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "herald_http_requests_total",
			Help: "HTTP requests by route pattern, method and status code.",
		}, []string{"route", "method", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "herald_http_request_duration_seconds",
			Help:    "HTTP request latency by route pattern and method.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"route", "method"}),
	}
	reg.MustRegister(m.requests, m.latency)
	// Process and Go runtime series; a second server on the same registry
	// (tests) would register them twice, which is harmless to skip.
	_ = reg.Register(collectors.NewGoCollector())
	_ = reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

func (m *metrics) observe(method, route string, code int, d time.Duration) {
	m.requests.WithLabelValues(route, method, strconv.Itoa(code)).Inc()
	m.latency.WithLabelValues(route, method).Observe(d.Seconds())
}

func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	promhttp.HandlerFor(s.registry, promhttp.HandlerOpts{}).ServeHTTP(w, r)
	return nil
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	if err := s.st.Ping(r.Context()); err != nil {
		s.log.ErrorContext(r.Context(), "health check failed", "err", err)
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"ok": false, "error": "internal_error", "message": "database unavailable"})
		return nil
	}
	writeJSON(w, http.StatusOK, map[string]bool{"ok": true})
	return nil
}
