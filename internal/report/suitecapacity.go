package report

import (
	"fmt"
	"slices"
	"strings"

	"github.com/ycsbctl/ycsbctl/internal/capacity"
)

// SuiteCapacity is one capacity step of a suite: which database, which
// step of the file and sweep values, and the search's record.
type SuiteCapacity struct {
	Database string
	Step     string
	Sweep    []SweepPoint
	Record   *capacity.Record
}

// Scenario is the step with its sweep values.
func (s SuiteCapacity) Scenario() string {
	return SuiteRun{Step: s.Step, Sweep: s.Sweep}.Scenario()
}

// capacityCharts are the compare page's capacity section: the capacity
// each database found per scenario as bars (0 where none passed), then per
// scenario and objective the databases' curves overlaid: the objective's
// intended-time percentile against achieved throughput, one line per
// database, the bound drawn across.
func (p *SuitePage) capacityCharts() (bars *BarChart, curves []*LineChart) {
	if len(p.Capacities) == 0 {
		return nil, nil
	}
	var scenarios, dbs []string
	value := map[[2]string]float64{}
	for _, c := range p.Capacities {
		sc := c.Scenario()
		if !contains(scenarios, sc) {
			scenarios = append(scenarios, sc)
		}
		if !contains(dbs, c.Database) {
			dbs = append(dbs, c.Database)
		}
		if c.Record.Answer.Found {
			value[[2]string{sc, c.Database}] = c.Record.Answer.Capacity
		}
	}
	bars = &BarChart{ID: "suite-capacity", Title: "Capacity within the objectives (ops/s; 0: no target passed)", YLabel: "ops/s", Width: 1200, Height: 360, Groups: scenarios}
	for i, db := range dbs {
		b := Bar{Name: db, Color: color(i)}
		for _, sc := range scenarios {
			b.Values = append(b.Values, value[[2]string{sc, db}])
		}
		bars.Bars = append(bars.Bars, b)
	}
	for si, sc := range scenarios {
		var objs []capacity.Objective
		for _, c := range p.Capacities {
			if c.Scenario() != sc {
				continue
			}
			for _, o := range c.Record.Settings.Objectives {
				if !containsObjective(objs, o) {
					objs = append(objs, o)
				}
			}
		}
		for oi, o := range objs {
			ch := &LineChart{ID: fmt.Sprintf("suite-capacity-curve-%d-%d", si, oi), Title: fmt.Sprintf("%s: %s %s intended against throughput", sc, o.Op, o.Key()),
				XLabel: "achieved throughput (ops/s)", YLabel: o.Key(), Width: 590, Height: 320, LogY: true, YFormat: fmtMicros,
				HLines: []RefLine{{Value: float64(o.Bound.Nanoseconds()) / 1e3, Label: o.String()}}}
			for _, c := range p.Capacities {
				if c.Scenario() != sc {
					continue
				}
				s := Series{Name: c.Database, Color: color(slices.Index(dbs, c.Database))}
				for _, pr := range judged(c.Record) {
					if l := pr.Op(o.Op.String()); l != nil {
						if v, ok := l.Intended[o.Key()]; ok {
							s.X, s.Y = append(s.X, pr.Achieved), append(s.Y, v)
						}
					}
				}
				ch.Series = append(ch.Series, s)
			}
			curves = append(curves, ch)
		}
	}
	return bars, curves
}

// capacityNotes say each search's answer in a line.
func (p *SuitePage) capacityNotes() []string {
	var out []string
	for _, c := range p.Capacities {
		out = append(out, fmt.Sprintf("%s %s: %s", c.Database, strings.TrimSpace(c.Scenario()), c.Record.AnswerText()))
	}
	return out
}

func containsObjective(list []capacity.Objective, o capacity.Objective) bool {
	for _, x := range list {
		if x.Op == o.Op && x.Percentile == o.Percentile {
			return true
		}
	}
	return false
}
