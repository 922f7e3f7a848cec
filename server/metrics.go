package server

import (
	"crypto/subtle"
	"net/http"
	"strconv"
	"strings"
	"sync"
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

// routeMetrics are one route's series, looked up once at registration
// rather than by label values on every request.
type routeMetrics struct {
	m             *metrics
	method, route string
	latency       prometheus.Observer
	mu            sync.Mutex
	codes         map[int]prometheus.Counter
}

func (m *metrics) forRoute(method, route string) *routeMetrics {
	return &routeMetrics{m: m, method: method, route: route,
		latency: m.latency.WithLabelValues(route, method), codes: map[int]prometheus.Counter{}}
}

func (r *routeMetrics) observe(code int, d time.Duration) {
	r.mu.Lock()
	c, ok := r.codes[code]
	if !ok {
		c = r.m.requests.WithLabelValues(r.route, r.method, strconv.Itoa(code))
		r.codes[code] = c
	}
	r.mu.Unlock()
	c.Inc()
	r.latency.Observe(d.Seconds())
}

func (s *Server) handleMetrics(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	if want := s.cfg.MetricsToken; want != "" {
		scheme, got, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if !strings.EqualFold(scheme, "Bearer") || subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(want)) != 1 {
			return errInvalidToken("/metrics needs Authorization: Bearer <metrics_token>")
		}
	}
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
