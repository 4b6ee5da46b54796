package ycsbtext

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
)

// Exporter class names YCSB accepts in `exporter`, and their short forms.
const (
	TextExporter      = "site.ycsb.measurements.exporter.TextMeasurementsExporter"
	JSONExporter      = "site.ycsb.measurements.exporter.JSONMeasurementsExporter"
	JSONArrayExporter = "site.ycsb.measurements.exporter.JSONArrayMeasurementsExporter"
)

// ExporterNames lists the accepted exporter names.
var ExporterNames = []string{TextExporter, JSONExporter, JSONArrayExporter, "text", "json", "jsonarray"}

// CheckExporter validates an exporter name.
func CheckExporter(name string) error {
	for _, n := range ExporterNames {
		if n == name {
			return nil
		}
	}
	return fmt.Errorf("property \"exporter\"=%q: expected one of %s", name, strings.Join(ExporterNames, ", "))
}

// Export writes the summary with the named exporter (YCSB class name).
func Export(w io.Writer, exporter string, s *Summary) error {
	if exporter == "" {
		exporter = TextExporter
	}
	if err := CheckExporter(exporter); err != nil {
		return err
	}
	lines := Lines(s)
	bw := bufio.NewWriter(w)
	switch exporter {
	case TextExporter, "text":
		for _, l := range lines {
			if _, err := fmt.Fprintf(bw, "[%s], %s, %s\n", l.Metric, l.Measurement, formatValue(l.Value)); err != nil {
				return err
			}
		}
	case JSONExporter, "json":
		// YCSB writes a stream of objects that is not one JSON document;
		// here every object is a valid JSON document on its own line.
		for _, l := range lines {
			b, err := json.Marshal(jsonLine(l))
			if err != nil {
				return err
			}
			if _, err := bw.Write(append(b, '\n')); err != nil {
				return err
			}
		}
	case JSONArrayExporter, "jsonarray":
		objs := make([]jsonRecord, 0, len(lines))
		for _, l := range lines {
			objs = append(objs, jsonLine(l))
		}
		b, err := json.MarshalIndent(objs, "", "  ")
		if err != nil {
			return err
		}
		if _, err := bw.Write(append(b, '\n')); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// jsonRecord is YCSB's JSON object, fields in Java's order.
type jsonRecord struct {
	Metric      string `json:"metric"`
	Measurement string `json:"measurement"`
	Value       any    `json:"value"`
}

// jsonLine maps a line to YCSB's JSON object. Doubles are written as
// Java's JSON exporters write them (Double.toString: "500.0", "1.5E7"),
// so a reader that tells integers from doubles by the token sees the same
// types as with YCSB; non-finite doubles (which JSON cannot carry) become
// null.
func jsonLine(l Line) jsonRecord {
	v := l.Value
	if f, ok := v.(float64); ok {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			v = nil
		} else {
			v = json.Number(JavaDouble(f))
		}
	}
	return jsonRecord{Metric: l.Metric, Measurement: l.Measurement, Value: v}
}
