package workbook

import (
	"encoding/csv"
	"fmt"
	"io"

	"github.com/xuri/excelize/v2"

	"github.com/ycsbctl/ycsbctl/internal/outfile"
)

// Sheet names.
const (
	SheetOverall    = "Overall"
	SheetOperations = "Operations"
	SheetPeriods    = "Periods"
	SheetScans      = "Thread scans"
	SheetEnv        = "Environment"
	SheetChart      = "Throughput chart"
)

// table is one sheet's name, columns and rows.
type table struct {
	name   string
	header []string
	rows   [][]Cell
}

// WriteXLSX writes the workbook to path.
func (d *Data) WriteXLSX(path string) error {
	f := excelize.NewFile()
	// Close only removes excelize's temporary files; SaveAs's error is
	// the one that matters.
	defer func() { _ = f.Close() }()
	if err := f.SetSheetName("Sheet1", SheetOverall); err != nil {
		return err
	}
	header, err := f.NewStyle(&excelize.Style{Font: &excelize.Font{Bold: true}, Fill: excelize.Fill{Type: "pattern", Pattern: 1, Color: []string{"#E8EAF0"}}})
	if err != nil {
		return err
	}
	sheets := []table{
		{SheetOverall, OverallHeader, d.OverallRows()},
		{SheetOperations, OperationsHeader, d.OperationRows()},
		{SheetPeriods, PeriodsHeader, d.PeriodRows()},
		{SheetHosts, HostsHeader, d.HostRows()},
		{SheetEnv, EnvironmentHeader, d.EnvironmentRows()},
	}
	if len(d.State.Scans) > 0 {
		sheets = append(sheets, table{SheetScans, ScansHeader, d.ScanRows()})
	}
	if len(d.Searches) > 0 {
		sheets = append(sheets, table{SheetCapacity, CapacityHeader, d.CapacityRows()})
	}
	for _, s := range sheets {
		if s.name != SheetOverall {
			if _, err := f.NewSheet(s.name); err != nil {
				return err
			}
		}
		if err := writeTable(f, s.name, s.header, s.rows, header); err != nil {
			return fmt.Errorf("sheet %s: %w", s.name, err)
		}
	}
	if len(d.Steps) > 0 {
		if err := d.addChart(f, header); err != nil {
			return fmt.Errorf("chart: %w", err)
		}
	}
	f.SetActiveSheet(0)
	return outfile.WriteWith(path, 0o644, func(w io.Writer) error { return f.Write(w) })
}

func writeTable(f *excelize.File, sheet string, header []string, rows [][]Cell, style int) error {
	hdr := make([]any, len(header))
	for i, h := range header {
		hdr[i] = h
	}
	if err := f.SetSheetRow(sheet, "A1", &hdr); err != nil {
		return err
	}
	last, _ := excelize.CoordinatesToCellName(len(header), 1)
	if err := f.SetCellStyle(sheet, "A1", last, style); err != nil {
		return err
	}
	for i, r := range rows {
		cell, _ := excelize.CoordinatesToCellName(1, i+2)
		row := make([]any, len(r))
		copy(row, r)
		if err := f.SetSheetRow(sheet, cell, &row); err != nil {
			return err
		}
	}
	if err := f.SetPanes(sheet, &excelize.Panes{Freeze: true, YSplit: 1, TopLeftCell: "A2", ActivePane: "bottomLeft"}); err != nil {
		return err
	}
	for i, h := range header {
		col, _ := excelize.ColumnNumberToName(i + 1)
		w := float64(len(h)) + 4
		if w < 12 {
			w = 12
		}
		if err := f.SetColWidth(sheet, col, col, w); err != nil {
			return err
		}
	}
	return nil
}

// addChart lays out throughput as a step × database table and charts it
// as clustered columns: one group per step (and sweep value), one column
// per database, as the 2014 report drew it.
func (d *Data) addChart(f *excelize.File, style int) error {
	var dbs, labels []string
	seenDB, seenLabel := map[string]bool{}, map[string]bool{}
	value := map[[2]string]float64{}
	for _, s := range d.Steps {
		db, label := s.State.Database, s.StepName()
		if sw := s.SweepText(); sw != "" {
			label += " " + sw
		}
		if !seenDB[db] {
			seenDB[db] = true
			dbs = append(dbs, db)
		}
		if !seenLabel[label] {
			seenLabel[label] = true
			labels = append(labels, label)
		}
		value[[2]string{label, db}] = s.Bundle.Run.Summary.Throughput
	}
	if _, err := f.NewSheet(SheetChart); err != nil {
		return err
	}
	header := append([]string{"Step"}, dbs...)
	var rows [][]Cell
	for _, l := range labels {
		row := []Cell{l}
		for _, db := range dbs {
			if v, ok := value[[2]string{l, db}]; ok {
				row = append(row, v)
			} else {
				row = append(row, "")
			}
		}
		rows = append(rows, row)
	}
	if err := writeTable(f, SheetChart, header, rows, style); err != nil {
		return err
	}
	sheet := "'" + SheetChart + "'"
	var series []excelize.ChartSeries
	for i, db := range dbs {
		col, _ := excelize.ColumnNumberToName(i + 2)
		series = append(series, excelize.ChartSeries{
			Name:       fmt.Sprintf("%s!$%s$1", sheet, col),
			Categories: fmt.Sprintf("%s!$A$2:$A$%d", sheet, len(labels)+1),
			Values:     fmt.Sprintf("%s!$%s$2:$%s$%d", sheet, col, col, len(labels)+1),
		})
		_ = db
	}
	anchor, _ := excelize.CoordinatesToCellName(len(dbs)+3, 2)
	width := uint(160 + 70*len(labels)*len(dbs))
	if width < 640 {
		width = 640
	}
	if width > 2400 {
		width = 2400
	}
	return f.AddChart(SheetChart, anchor, &excelize.Chart{
		Type:   excelize.Col,
		Series: series,
		Title:  excelize.ChartTitle{Paragraph: []excelize.RichTextRun{{Text: "Throughput by step and database (ops/s)"}}},
		Legend: excelize.ChartLegend{Position: "bottom"},
		XAxis:  excelize.ChartAxis{Title: excelize.ChartTitle{Paragraph: []excelize.RichTextRun{{Text: "step"}}}},
		YAxis:  excelize.ChartAxis{Title: excelize.ChartTitle{Paragraph: []excelize.RichTextRun{{Text: "ops/s"}}}, MajorGridLines: true},
		Dimension: excelize.ChartDimension{
			Width:  width,
			Height: 420,
		},
	})
}

// WriteCSV writes the Overall rows as CSV, cell for cell as the sheet
// stores them.
func (d *Data) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(OverallHeader); err != nil {
		return err
	}
	for _, r := range d.OverallRows() {
		rec := make([]string, len(r))
		for i, c := range r {
			rec[i] = FormatCell(c)
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteCSVFile writes summary.csv to path.
func (d *Data) WriteCSVFile(path string) error {
	return outfile.WriteWith(path, 0o644, d.WriteCSV)
}
