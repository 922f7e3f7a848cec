package delivery

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/heraldhq/herald/store"
)

type metrics struct {
	outcomes *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer, st *store.Store) *metrics {
	m := &metrics{outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "herald_deliveries_total",
		Help: "Callback delivery attempts by outcome: delivered, retry, dead_lettered; and deferred, a job put off while its host rests.",
	}, []string{"outcome"})}
	if reg == nil {
		return m
	}
	reg.MustRegister(m.outcomes, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "herald_delivery_queue_depth",
		Help: "Callback deliveries waiting to be sent or retried.",
	}, func() float64 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		n, err := st.PendingDeliveries(ctx)
		if err != nil {
			return -1
		}
		return float64(n)
	}))
	return m
}

func (m *metrics) outcome(state string, success bool) {
	switch {
	case success:
		m.outcomes.WithLabelValues("delivered").Inc()
	case state == store.DeliveryFailed:
		m.outcomes.WithLabelValues("dead_lettered").Inc()
	case state == store.DeliveryPending:
		m.outcomes.WithLabelValues("retry").Inc()
	}
}
