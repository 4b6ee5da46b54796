package mongodb

import (
	"bytes"
	"encoding/binary"
	"strings"
	"sync"
	"sync/atomic"

	"go.mongodb.org/mongo-driver/v2/x/bsonx/bsoncore"

	"github.com/ycsbctl/ycsbctl/adapters"
)

// The hot paths build their BSON by hand into pooled byte slices and hand
// the driver bson.Raw: that avoids reflection and the per-field interface
// boxing of bson.D, and lets one buffer serve every operation of a worker.
// Only the handful of element types ycsbctl writes are needed.

const (
	bsonString byte = 0x02
	bsonDoc    byte = 0x03
	bsonBinary byte = 0x05
	bsonInt32  byte = 0x10

	// YCSB's Java binding stores byte[] values, which the Java driver
	// encodes as binary subtype 0 (generic); ycsbctl writes the same so
	// that data loaded by either tool reads back in the other.
	binaryGeneric byte = 0x00
)

func appendInt32(dst []byte, v int32) []byte {
	return binary.LittleEndian.AppendUint32(dst, uint32(v))
}

// beginDoc reserves a document's length prefix and returns its offset.
func beginDoc(dst []byte) (int, []byte) {
	return len(dst), append(dst, 0, 0, 0, 0)
}

// endDoc terminates the document started at start and fills in its length.
func endDoc(dst []byte, start int) []byte {
	dst = append(dst, 0)
	binary.LittleEndian.PutUint32(dst[start:], uint32(len(dst)-start))
	return dst
}

func appendKey(dst []byte, t byte, name string) []byte {
	dst = append(dst, t)
	dst = append(dst, name...)
	return append(dst, 0)
}

func appendStringElem(dst []byte, name string, v []byte) []byte {
	dst = appendKey(dst, bsonString, name)
	dst = appendInt32(dst, int32(len(v)+1))
	dst = append(dst, v...)
	return append(dst, 0)
}

func appendBinaryElem(dst []byte, name string, v []byte) []byte {
	dst = appendKey(dst, bsonBinary, name)
	dst = appendInt32(dst, int32(len(v)))
	dst = append(dst, binaryGeneric)
	return append(dst, v...)
}

func appendInt32Elem(dst []byte, name string, v int32) []byte {
	return appendInt32(appendKey(dst, bsonInt32, name), v)
}

// validName reports whether a field name can be written as a BSON key: a
// NUL would end the key early and silently shift the rest of the document.
func validName(name string) bool { return strings.IndexByte(name, 0) < 0 }

func validFields(values []adapters.Field) bool {
	for i := range values {
		if !validName(values[i].Name) || values[i].Name == "_id" {
			return false
		}
	}
	return true
}

// appendIDFilter appends {_id: key}.
func appendIDFilter(dst []byte, key []byte) []byte {
	start, dst := beginDoc(dst)
	dst = appendStringElem(dst, "_id", key)
	return endDoc(dst, start)
}

// appendScanFilter appends {_id: {$gte: key}}.
func appendScanFilter(dst []byte, key []byte) []byte {
	start, dst := beginDoc(dst)
	dst = appendKey(dst, bsonDoc, "_id")
	inner, dst := beginDoc(dst)
	dst = appendStringElem(dst, "$gte", key)
	dst = endDoc(dst, inner)
	return endDoc(dst, start)
}

// appendProjection appends {f1: 1, f2: 1, ...}.
func appendProjection(dst []byte, fields []string) []byte {
	start, dst := beginDoc(dst)
	for _, f := range fields {
		dst = appendInt32Elem(dst, f, 1)
	}
	return endDoc(dst, start)
}

// appendRecord appends {_id: key, field: binary, ...}, YCSB's document shape.
func appendRecord(dst []byte, key []byte, values []adapters.Field) []byte {
	start, dst := beginDoc(dst)
	dst = appendStringElem(dst, "_id", key)
	for i := range values {
		dst = appendBinaryElem(dst, values[i].Name, values[i].Value)
	}
	return endDoc(dst, start)
}

// appendSetUpdate appends {$set: {field: binary, ...}}.
func appendSetUpdate(dst []byte, values []adapters.Field) []byte {
	start, dst := beginDoc(dst)
	dst = appendKey(dst, bsonDoc, "$set")
	inner, dst := beginDoc(dst)
	for i := range values {
		dst = appendBinaryElem(dst, values[i].Name, values[i].Value)
	}
	dst = endDoc(dst, inner)
	return endDoc(dst, start)
}

// sortByID is {_id: 1}; it is read-only and shared.
var sortByID = func() []byte {
	start, dst := beginDoc(nil)
	dst = appendInt32Elem(dst, "_id", 1)
	return endDoc(dst, start)
}()

// element is one top-level field of a result document, pointing into it.
type element struct {
	typ   byte
	key   []byte
	value []byte // the raw value bytes
}

// forEachElement walks a document's top-level elements without allocating.
// It reports false for a malformed document instead of panicking.
func forEachElement(doc []byte, fn func(e element)) bool {
	if len(doc) < 5 {
		return false
	}
	n := int(binary.LittleEndian.Uint32(doc))
	if n != len(doc) || doc[n-1] != 0 {
		return false
	}
	rem := doc[4 : n-1]
	for len(rem) > 0 {
		el, rest, ok := bsoncore.ReadElement(rem)
		if !ok {
			return false
		}
		rem = rest
		k := bytes.IndexByte(el[1:], 0)
		if k < 0 {
			return false
		}
		fn(element{typ: el[0], key: el[1 : 1+k], value: el[2+k:]})
	}
	return true
}

// idOf returns the string _id of a document (normally its first field).
func idOf(doc []byte) ([]byte, bool) {
	if len(doc) < 5 || int(binary.LittleEndian.Uint32(doc)) != len(doc) {
		return nil, false
	}
	rem := doc[4 : len(doc)-1]
	for len(rem) > 0 {
		el, rest, ok := bsoncore.ReadElement(rem)
		if !ok {
			return nil, false
		}
		rem = rest
		if len(el) > 5 && el[0] == bsonString && string(el[1:5]) == "_id\x00" {
			return valueBytes(element{typ: bsonString, key: el[1:4], value: el[5:]})
		}
	}
	return nil, false
}

// valueBytes returns the payload of a binary or string value. YCSB data is
// binary; strings are accepted so that documents written by other tools
// (e.g. go-ycsb or mongosh) read back too.
func valueBytes(e element) ([]byte, bool) {
	switch e.typ {
	case bsonBinary:
		_, data, _, ok := bsoncore.ReadBinary(e.value)
		return data, ok
	case bsonString:
		if len(e.value) < 5 {
			return nil, false
		}
		l := int(int32(binary.LittleEndian.Uint32(e.value)))
		if l < 1 || 4+l > len(e.value) {
			return nil, false
		}
		return e.value[4 : 4+l-1], true
	}
	return nil, false
}

// fillRecord copies a result document's fields (all but _id) into rec.
// With fields named, the names stored are the caller's own strings, so no
// name is allocated per read.
func fillRecord(doc []byte, fields []string, names *interner, rec *adapters.Record) bool {
	return forEachElement(doc, func(e element) {
		if string(e.key) == "_id" {
			return
		}
		v, isData := valueBytes(e)
		if !isData {
			return // YCSB also ignores non-binary fields
		}
		if fields == nil {
			rec.Add(names.name(e.key), v)
			return
		}
		for _, f := range fields {
			if f == string(e.key) {
				rec.Add(f, v)
				return
			}
		}
	})
}

// interner maps field names read from results to shared strings, so that a
// read of all fields does not allocate the same "field0".."field9" again
// and again. Reads take an atomic load; the rare miss copies the map.
type interner struct {
	mu sync.Mutex
	m  atomic.Pointer[map[string]string]
}

const maxInterned = 4096 // bounds memory if documents have arbitrary keys

func (in *interner) name(b []byte) string {
	if m := in.m.Load(); m != nil {
		if s, ok := (*m)[string(b)]; ok {
			return s
		}
	}
	s := string(b)
	in.mu.Lock()
	defer in.mu.Unlock()
	old := in.m.Load()
	if old != nil && len(*old) >= maxInterned {
		return s
	}
	next := make(map[string]string, 1+lenMap(old))
	if old != nil {
		for k, v := range *old {
			next[k] = v
		}
	}
	next[s] = s
	in.m.Store(&next)
	return s
}

func lenMap(m *map[string]string) int {
	if m == nil {
		return 0
	}
	return len(*m)
}
