package workload

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"sync/atomic"
	"time"

	"github.com/ycsbctl/ycsbctl/adapters"
	"github.com/ycsbctl/ycsbctl/internal/clock"
	"github.com/ycsbctl/ycsbctl/internal/generator"
	"github.com/ycsbctl/ycsbctl/internal/measurement"
	"github.com/ycsbctl/ycsbctl/internal/properties"
)

// Operation kinds of the transaction mix.
const (
	opRead = iota
	opUpdate
	opInsert
	opScan
	opRMW
	opDelete
)

// Workload is the shared part of a CoreWorkload.
type Workload struct {
	Cfg        *Config
	fieldNames []string
	opChooser  *generator.Discrete
	// keySequence hands out load-phase key numbers (shared by all
	// workers, as YCSB's keysequence counter).
	keySequence *generator.Counter
	// txInserts hands out run-phase insert sequence numbers and tracks
	// which have been acknowledged.
	txInserts *generator.AcknowledgedCounter
	// limit is the highest key number reads may pick.
	limit generator.Limit
	// external, when set, overrides the limit (distributed runs: the
	// coordinator's cluster-wide acknowledged limit).
	external atomic.Pointer[int64]
	// templates for per-worker generators
	keyChooser generator.Long
	fieldLen   generator.Long
	scanLen    generator.Long
	pool       []byte
	clock      clock.Clock
	stop       atomic.Bool
}

// localLimit maps the acknowledged-counter's sequence to key numbers.
type localLimit struct{ w *Workload }

func (l localLimit) Last() int64 { return l.w.LastAcknowledged() }

// New builds a workload from properties.
func New(p *properties.Properties, clk clock.Clock) (*Workload, error) {
	cfg, err := ParseConfig(p)
	if err != nil {
		return nil, err
	}
	return NewFromConfig(cfg, clk)
}

// NewFromConfig builds a workload from an already parsed configuration,
// so a process that validated its properties does not parse them again.
func NewFromConfig(cfg *Config, clk clock.Clock) (*Workload, error) {
	if clk == nil {
		clk = clock.NewReal()
	}
	w := &Workload{Cfg: cfg, clock: clk}
	w.fieldNames = make([]string, cfg.FieldCount)
	for i := range w.fieldNames {
		w.fieldNames[i] = fmt.Sprintf("%s%d", cfg.FieldNamePrefix, i)
	}
	w.opChooser = generator.NewDiscrete()
	// YCSB adds weights in this order; only positive ones count.
	for _, e := range []struct {
		w  float64
		op int
	}{{cfg.ReadProp, opRead}, {cfg.UpdateProp, opUpdate}, {cfg.InsertProp, opInsert}, {cfg.ScanProp, opScan}, {cfg.RMWProp, opRMW}, {cfg.DeleteProp, opDelete}} {
		if e.w > 0 {
			w.opChooser.Add(e.w, e.op)
		}
	}
	w.keySequence = generator.NewCounter(cfg.InsertStart)
	w.txInserts = generator.NewAcknowledgedCounter(0)
	w.limit = localLimit{w}

	lb := cfg.InsertStart
	ub := cfg.InsertStart + cfg.InsertCount - 1
	switch cfg.RequestDist {
	case "uniform":
		w.keyChooser = generator.NewUniform(lb, ub)
	case "sequential":
		w.keyChooser = generator.NewSequential(lb, ub)
	case "zipfian":
		// YCSB widens the zipfian range by the expected inserts ("fudge
		// factor 2") so that new keys can be popular too.
		expected := int64(float64(cfg.KeyspaceOperationCount) * cfg.InsertProp * 2)
		w.keyChooser = generator.NewScrambledZipfian(lb, lb+cfg.InsertCount+expected)
	case "latest":
		w.keyChooser = generator.NewSkewedLatest(w.limit)
	case "hotspot":
		w.keyChooser = generator.NewHotspot(lb, ub, cfg.HotspotData, cfg.HotspotOpn)
	case "exponential":
		w.keyChooser = generator.NewExponential(cfg.ExpPercentile, float64(cfg.RecordCount)*cfg.ExpFrac)
	}
	switch cfg.FieldLengthDist {
	case "constant":
		w.fieldLen = &generator.Constant{V: cfg.FieldLength}
	case "uniform":
		w.fieldLen = generator.NewUniform(cfg.MinFieldLength, cfg.FieldLength)
	case "zipfian":
		w.fieldLen = generator.NewZipfian(cfg.MinFieldLength, cfg.FieldLength, generator.ZipfianConstant)
	case "histogram":
		f, err := os.Open(cfg.FieldLengthHist)
		if err != nil {
			return nil, &properties.Error{Property: PropFieldLengthHistogram, Value: cfg.FieldLengthHist, Expected: "a readable histogram file"}
		}
		h, err := generator.NewHistogramFromReader(f)
		if err = errors.Join(err, f.Close()); err != nil {
			return nil, &properties.Error{Property: PropFieldLengthHistogram, Value: cfg.FieldLengthHist, Expected: "a YCSB histogram file (" + err.Error() + ")"}
		}
		w.fieldLen = h
	}
	switch cfg.ScanLengthDist {
	case "uniform":
		w.scanLen = generator.NewUniform(cfg.MinScanLength, cfg.MaxScanLength)
	case "constant":
		// ycsbctl's: every scan asks for maxscanlength rows (HBase
		// PerformanceEvaluation's scanRange10/100).
		w.scanLen = generator.Constant{V: cfg.MaxScanLength}
	default:
		w.scanLen = generator.NewZipfian(cfg.MinScanLength, cfg.MaxScanLength, generator.ZipfianConstant)
	}
	if !cfg.FreshValues && !cfg.DataIntegrity {
		w.pool = newValuePool(valuePoolSize(cfg))
	}
	return w, nil
}

// FieldNames returns the field names in order.
func (w *Workload) FieldNames() []string { return w.fieldNames }

// SetExternalLimit installs a cluster-wide acknowledged key limit: reads
// never pick a key above it. Distributed runs refresh it from the
// coordinator.
func (w *Workload) SetExternalLimit(v int64) {
	w.external.Store(&v)
}

// LastAcknowledged returns the highest key number that reads may pick: the
// contiguous acknowledged run-phase inserts, or the external limit.
func (w *Workload) LastAcknowledged() int64 {
	if p := w.external.Load(); p != nil {
		return *p
	}
	// With stripes, this process' own contiguous inserts are not
	// contiguous key numbers; without an external limit only the loaded
	// range is safe.
	if w.Cfg.StripeCount > 1 {
		return w.Cfg.RecordCount - 1
	}
	return w.Cfg.RecordCount + w.txInserts.Last()
}

// LocalInsertsAcknowledged returns how many of this process' run-phase
// inserts form a contiguous acknowledged prefix (their sequence numbers
// 0..n-1). The coordinator combines these into the cluster-wide limit.
func (w *Workload) LocalInsertsAcknowledged() int64 { return w.txInserts.Last() + 1 }

// StopLoad makes load-phase workers stop (an insert failed for good).
func (w *Workload) StopLoad() { w.stop.Store(true) }

// Stopped reports whether StopLoad was called.
func (w *Workload) Stopped() bool { return w.stop.Load() }

// insertKeyNum maps a run-phase insert sequence number to a key number.
func (w *Workload) insertKeyNum(seq int64) int64 {
	return w.Cfg.RecordCount + seq*w.Cfg.StripeCount + w.Cfg.StripeIndex
}

// Worker is one goroutine's view of the workload.
type Worker struct {
	w        *Workload
	rnd      *generator.Rand
	keys     generator.Long
	fieldLen generator.Long
	scanLen  generator.Long
	clock    clock.Clock
	rec      *measurement.Recorder
	db       adapters.DB

	keyBuf     []byte
	values     []adapters.Field
	valueBufs  [][]byte
	oneField   []string
	allFields  []string
	readFields []string
	record     adapters.Record
	rows       adapters.Rows
	verifyBuf  []byte
	// Intended is the scheduled start of the current transaction in
	// clock Nanotime; the engine sets it before each call.
	Intended int64

	// batch state (load phase with batchsize > 1)
	batchKeys   [][]byte
	batchValues [][]adapters.Field
	batchN      int
	warnedBatch bool
}

// NewWorker creates worker id's private state.
func (w *Workload) NewWorker(id int, db adapters.DB, rec *measurement.Recorder, seed uint64) *Worker {
	wk := &Worker{
		w:        w,
		rnd:      generator.NewRand(seed),
		keys:     clone(w.keyChooser),
		fieldLen: clone(w.fieldLen),
		scanLen:  clone(w.scanLen),
		clock:    w.clock,
		rec:      rec,
		db:       db,
		keyBuf:   make([]byte, 0, 64),
		oneField: make([]string, 1),
	}
	wk.allFields = w.fieldNames
	if w.Cfg.ReadAllFields && w.Cfg.ReadAllFieldsByName {
		wk.readFields = w.fieldNames
	}
	wk.values = make([]adapters.Field, 0, len(w.fieldNames))
	wk.valueBufs = make([][]byte, len(w.fieldNames))
	return wk
}

func clone(g generator.Long) generator.Long {
	if c, ok := g.(generator.Cloner); ok {
		return c.Clone()
	}
	return g
}

// Recorder returns the worker's measurement recorder.
func (wk *Worker) Recorder() *measurement.Recorder { return wk.rec }

func (wk *Worker) buildKey(keynum int64) []byte {
	cfg := wk.w.Cfg
	wk.keyBuf = generator.AppendKey(wk.keyBuf[:0], cfg.KeyPrefix, keynum, cfg.ZeroPadding, !cfg.OrderedInserts)
	return wk.keyBuf
}

// nextKeynum draws a key number for a read, update, scan or RMW, redrawing
// keys that are not acknowledged yet, as YCSB's nextKeynum does.
func (wk *Worker) nextKeynum() int64 {
	limit := wk.w.LastAcknowledged()
	if wk.w.Cfg.RequestDist == "exponential" {
		for i := 0; ; i++ {
			k := limit - wk.keys.Next(wk.rnd)
			if k >= 0 || i > 1000 {
				if k < 0 {
					k = 0
				}
				return k
			}
		}
	}
	for i := 0; ; i++ {
		k := wk.keys.Next(wk.rnd)
		if k <= limit {
			return k
		}
		if i > 10000 {
			// A key space with nothing acknowledged below the draw;
			// fall back to the limit rather than spin forever.
			return limit
		}
	}
}

func (wk *Worker) fieldLength() int {
	return int(wk.fieldLen.Next(wk.rnd))
}

// value returns the bytes for field i of key.
func (wk *Worker) value(i int, key []byte) []byte {
	cfg := wk.w.Cfg
	if cfg.DataIntegrity {
		wk.valueBufs[i] = generator.AppendDeterministicValue(wk.valueBufs[i][:0], key, wk.w.fieldNames[i], int(cfg.FieldLength))
		return wk.valueBufs[i]
	}
	n := wk.fieldLength()
	if wk.w.pool != nil {
		return poolWindow(wk.w.pool, wk.rnd, n)
	}
	if cap(wk.valueBufs[i]) < n {
		wk.valueBufs[i] = make([]byte, n)
	}
	b := wk.valueBufs[i][:n]
	generator.FillRandomValue(wk.rnd, b)
	return b
}

func (wk *Worker) allValues(key []byte) []adapters.Field {
	wk.values = wk.values[:0]
	for i, name := range wk.w.fieldNames {
		wk.values = append(wk.values, adapters.Field{Name: name, Value: wk.value(i, key)})
	}
	return wk.values
}

func (wk *Worker) updateValues(key []byte) []adapters.Field {
	if wk.w.Cfg.WriteAllFields {
		return wk.allValues(key)
	}
	i := int(wk.rnd.Int64n(int64(len(wk.w.fieldNames))))
	wk.values = append(wk.values[:0], adapters.Field{Name: wk.w.fieldNames[i], Value: wk.value(i, key)})
	return wk.values
}

func (wk *Worker) readFieldSet() []string {
	if wk.w.Cfg.ReadAllFields {
		return wk.readFields
	}
	wk.oneField[0] = wk.w.fieldNames[wk.rnd.Int64n(int64(len(wk.w.fieldNames)))]
	return wk.oneField
}

// measure records one database call that started at t0 (Nanotime). A call
// whose context was cancelled under it (an abort) is counted as CANCELLED,
// whatever it returned: its latency was cut short.
func (wk *Worker) measure(ctx context.Context, op measurement.Op, st adapters.Status, t0 int64) {
	t1 := wk.clock.Nanotime()
	if ctx.Err() != nil {
		st = adapters.Cancelled
	}
	intended := wk.Intended
	if intended == 0 || intended > t0 {
		intended = t0
	}
	wk.rec.Measure(op, st, t1-t0, t1-intended)
}

// DoInsert performs one load-phase insert (or adds it to a batch). It
// returns false when the worker should stop (YCSB stops a client thread
// whose insert failed after its retries, unless keep-going is set).
func (wk *Worker) DoInsert(ctx context.Context) bool {
	cfg := wk.w.Cfg
	keynum := wk.w.keySequence.Next(wk.rnd)
	key := wk.buildKey(keynum)
	if cfg.BatchSize > 1 {
		if b, ok := wk.db.(adapters.BatchInserter); ok {
			return wk.addToBatch(ctx, b, key)
		}
	}
	values := wk.allValues(key)
	var st adapters.Status
	for attempt := int64(0); ; attempt++ {
		t0 := wk.clock.Nanotime()
		st = wk.db.Insert(ctx, cfg.Table, key, values)
		wk.measure(ctx, measurement.Insert, st, t0)
		if st.IsOK() || attempt >= cfg.InsertRetryLimit || ctx.Err() != nil {
			break
		}
		// YCSB sleeps a random 0.8..1.2 times the retry interval.
		d := time.Duration(cfg.InsertRetryInterval * (0.8 + 0.4*wk.rnd.Float64()) * float64(time.Second))
		if wk.clock.SleepUntil(ctx, wk.clock.Nanotime()+int64(d)) != nil {
			break
		}
	}
	wk.rec.Done(1)
	if !st.IsOK() && !cfg.InsertKeepGoing {
		return false
	}
	return true
}

// NeedsBatchWarning reports (once) that batching was asked for but the
// adapter cannot batch.
func (wk *Worker) NeedsBatchWarning() bool {
	if wk.w.Cfg.BatchSize <= 1 || wk.warnedBatch {
		return false
	}
	wk.warnedBatch = true
	_, ok := wk.db.(adapters.BatchInserter)
	return !ok
}

func (wk *Worker) addToBatch(ctx context.Context, b adapters.BatchInserter, key []byte) bool {
	n := int(wk.w.Cfg.BatchSize)
	if wk.batchKeys == nil {
		wk.batchKeys = make([][]byte, n)
		wk.batchValues = make([][]adapters.Field, n)
	}
	i := wk.batchN
	wk.batchKeys[i] = append(wk.batchKeys[i][:0], key...)
	vals := wk.batchValues[i][:0]
	for f, name := range wk.w.fieldNames {
		v := wk.value(f, key)
		if wk.w.pool == nil {
			// value() reuses per-field buffers; a batch must keep its own.
			v = append([]byte(nil), v...)
		}
		vals = append(vals, adapters.Field{Name: name, Value: v})
	}
	wk.batchValues[i] = vals
	wk.batchN++
	if wk.batchN < n {
		return true
	}
	return wk.FlushBatch(ctx)
}

// FlushBatch sends a pending batch. The batch call's latency is recorded
// once under INSERT; its records count as operations and their statuses as
// BATCHED_OK, except the one that carried the call, which gets the call's
// own status, as YCSB's MongoDB binding reports batches.
func (wk *Worker) FlushBatch(ctx context.Context) bool {
	if wk.batchN == 0 {
		return true
	}
	b, ok := wk.db.(adapters.BatchInserter)
	if !ok {
		return true
	}
	n := wk.batchN
	wk.batchN = 0
	t0 := wk.clock.Nanotime()
	st := b.BatchInsert(ctx, wk.w.Cfg.Table, wk.batchKeys[:n], wk.batchValues[:n])
	wk.measure(ctx, measurement.Insert, st, t0)
	// The records beyond the one that carried the call.
	if st.IsOK() {
		wk.rec.CountStatusN(measurement.Insert, adapters.BatchedOK, int64(n-1))
	} else {
		wk.rec.CountStatusN(measurement.Insert, st, int64(n-1))
	}
	wk.rec.Done(int64(n))
	if !st.IsOK() && !wk.w.Cfg.InsertKeepGoing {
		return false
	}
	return true
}

// DoTransaction performs one operation of the mix.
func (wk *Worker) DoTransaction(ctx context.Context) {
	switch wk.w.opChooser.Next(wk.rnd) {
	case opRead:
		wk.doRead(ctx)
	case opUpdate:
		wk.doUpdate(ctx)
	case opInsert:
		wk.doTxInsert(ctx)
	case opScan:
		wk.doScan(ctx)
	case opRMW:
		wk.doRMW(ctx)
	case opDelete:
		wk.doDelete(ctx)
	}
	wk.rec.Done(1)
}

func (wk *Worker) doRead(ctx context.Context) {
	key := wk.buildKey(wk.nextKeynum())
	fields := wk.readFieldSet()
	wk.record.Reset()
	t0 := wk.clock.Nanotime()
	st := wk.db.Read(ctx, wk.w.Cfg.Table, key, fields, &wk.record)
	wk.measure(ctx, measurement.Read, st, t0)
	if wk.w.Cfg.DataIntegrity && st.IsOK() {
		wk.verify(key)
	}
}

func (wk *Worker) doUpdate(ctx context.Context) {
	key := wk.buildKey(wk.nextKeynum())
	values := wk.updateValues(key)
	t0 := wk.clock.Nanotime()
	st := wk.db.Update(ctx, wk.w.Cfg.Table, key, values)
	wk.measure(ctx, measurement.Update, st, t0)
}

func (wk *Worker) doTxInsert(ctx context.Context) {
	seq := wk.w.txInserts.Next(wk.rnd)
	key := wk.buildKey(wk.w.insertKeyNum(seq))
	values := wk.allValues(key)
	t0 := wk.clock.Nanotime()
	st := wk.db.Insert(ctx, wk.w.Cfg.Table, key, values)
	wk.measure(ctx, measurement.Insert, st, t0)
	// YCSB acknowledges the key even when the insert failed, so that the
	// read limit keeps moving.
	if err := wk.w.txInserts.Acknowledge(seq); err != nil {
		wk.rec.CountStatus(measurement.Insert, adapters.UnexpectedState)
	}
}

func (wk *Worker) doScan(ctx context.Context) {
	key := wk.buildKey(wk.nextKeynum())
	n := wk.scanLen.Next(wk.rnd)
	if n > math.MaxInt32 {
		n = math.MaxInt32
	}
	fields := wk.readFieldSet()
	wk.rows.Reset()
	t0 := wk.clock.Nanotime()
	st := wk.db.Scan(ctx, wk.w.Cfg.Table, key, int(n), fields, &wk.rows)
	wk.measure(ctx, measurement.Scan, st, t0)
}

func (wk *Worker) doDelete(ctx context.Context) {
	key := wk.buildKey(wk.nextKeynum())
	t0 := wk.clock.Nanotime()
	st := wk.db.Delete(ctx, wk.w.Cfg.Table, key)
	wk.measure(ctx, measurement.Delete, st, t0)
}

// doRMW reads a record and writes it back, measuring the whole as
// READ-MODIFY-WRITE and the two calls under READ and UPDATE, as YCSB.
func (wk *Worker) doRMW(ctx context.Context) {
	key := wk.buildKey(wk.nextKeynum())
	fields := wk.readFieldSet()
	values := wk.updateValues(key)
	start := wk.clock.Nanotime()
	wk.record.Reset()
	t0 := start
	st := wk.db.Read(ctx, wk.w.Cfg.Table, key, fields, &wk.record)
	wk.measure(ctx, measurement.Read, st, t0)
	if wk.w.Cfg.DataIntegrity && st.IsOK() {
		wk.verify(key)
	}
	t0 = wk.clock.Nanotime()
	st = wk.db.Update(ctx, wk.w.Cfg.Table, key, values)
	wk.measure(ctx, measurement.Update, st, t0)
	end := wk.clock.Nanotime()
	intended := wk.Intended
	if intended == 0 || intended > start {
		intended = start
	}
	wk.rec.MeasureLatency(measurement.ReadModifyWrite, end-start, end-intended)
}

// verify checks the values just read against the deterministic values of
// key, recording VERIFY's latency and result as YCSB does.
func (wk *Worker) verify(key []byte) {
	t0 := wk.clock.Nanotime()
	st := adapters.OK
	if len(wk.record.Fields) == 0 {
		st = adapters.Error
	}
	for _, f := range wk.record.Fields {
		wk.verifyBuf = generator.AppendDeterministicValue(wk.verifyBuf[:0], key, f.Name, int(wk.w.Cfg.FieldLength))
		if string(wk.verifyBuf) != string(f.Value) {
			st = adapters.UnexpectedState
			break
		}
	}
	t1 := wk.clock.Nanotime()
	wk.rec.MeasureLatency(measurement.Verify, t1-t0, t1-t0)
	wk.rec.CountStatus(measurement.Verify, st)
}
