package main

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// go-pgx/scan=copy-binary and scan=copy-text: a scan read by COPY (query) TO STDOUT in that
// format through pgconn's CopyTo, every field decoded by pgx's codec for its column's type
// (described before the clock, as an application knows its result's types) into the same
// pgtype destinations the row path scans into.

var copySignature = []byte("PGCOPY\n\377\r\n\x00")

// copyReader takes the COPY data pgconn hands over, one CopyData message per Write (a row;
// in binary the file header comes with the first, the trailer alone), and decodes each row.
type copyReader struct {
	sk     *sink
	plan   *pgxPlan
	m      *pgtype.Map
	binary bool
	first  bool
	rows   int64
	raw    [][]byte
	text   []byte   // text format: the row's fields unescaped
	spans  [][2]int // and where each one is in it
}

func (r *copyReader) Write(p []byte) (int, error) {
	n := len(p)
	if r.binary {
		if r.first && bytes.HasPrefix(p, copySignature) && len(p) >= 19 {
			p = p[19+int(binary.BigEndian.Uint32(p[15:19])):]
		}
		r.first = false
		for len(p) >= 2 {
			fields := int(int16(binary.BigEndian.Uint16(p)))
			p = p[2:]
			if fields < 0 {
				break // the trailer
			}
			for c := 0; c < fields; c++ {
				size := int(int32(binary.BigEndian.Uint32(p)))
				p = p[4:]
				if size < 0 {
					r.raw[c] = nil
					continue
				}
				r.raw[c] = p[:size:size]
				p = p[size:]
			}
			if err := r.decode(pgtype.BinaryFormatCode); err != nil {
				return 0, err
			}
		}
		return n, nil
	}
	line := bytes.TrimSuffix(p, []byte{'\n'})
	r.text = r.text[:0]
	for c := range r.raw { // each field unescaped into r.text, its span kept (-1: NULL)
		field := line
		if tab := bytes.IndexByte(line, '\t'); tab >= 0 {
			field, line = line[:tab], line[tab+1:]
		} else {
			line = nil
		}
		if len(field) == 2 && field[0] == '\\' && field[1] == 'N' {
			r.spans[c] = [2]int{-1, -1}
			continue
		}
		start := len(r.text)
		r.text = unescapeCopy(r.text, field)
		r.spans[c] = [2]int{start, len(r.text)}
	}
	for c, span := range r.spans { // r.text is whole now: slice it
		if span[0] < 0 {
			r.raw[c] = nil
		} else {
			r.raw[c] = r.text[span[0]:span[1]:span[1]]
		}
	}
	return n, r.decode(pgtype.TextFormatCode)
}

// decode scans each field into its destination (a value read is a value decoded) and, when
// verifying, checksums the row.
func (r *copyReader) decode(format int16) error {
	for c, raw := range r.raw {
		if err := r.m.Scan(r.plan.oids[c], format, raw, r.plan.dests[c]); err != nil {
			return fmt.Errorf("column %d: %w", c+1, err)
		}
	}
	if r.sk != nil {
		for c, val := range r.plan.values {
			r.plan.row[c] = val(r.raw[c])
		}
		r.sk.add(r.plan.row)
	}
	r.rows++
	return nil
}

// unescapeCopy appends field, its COPY text escapes undone, to out.
func unescapeCopy(out, field []byte) []byte {
	for i := 0; i < len(field); i++ {
		ch := field[i]
		if ch == '\\' && i+1 < len(field) {
			i++
			switch ch = field[i]; ch {
			case 'b':
				ch = '\b'
			case 'f':
				ch = '\f'
			case 'n':
				ch = '\n'
			case 'r':
				ch = '\r'
			case 't':
				ch = '\t'
			case 'v':
				ch = '\v'
			}
		}
		out = append(out, ch)
	}
	return out
}

// describeCopy: the result's column types (untimed) and the COPY statement that reads it.
func (d *pgxDriver) describeCopy(sql string) error {
	sd, err := d.conn.PgConn().Prepare(ctx, "", sql, nil)
	if err != nil {
		return err
	}
	fields := make([]pgconn.FieldDescription, len(sd.Fields))
	copy(fields, sd.Fields)
	format := int16(pgtype.TextFormatCode)
	if d.copyOut == "binary" {
		format = pgtype.BinaryFormatCode
	}
	for i := range fields {
		fields[i].Format = format
	}
	d.copyPlan = d.planFor(fields)
	d.copySQL = fmt.Sprintf("COPY (%s) TO STDOUT (FORMAT %s)", sql, d.copyOut)
	return nil
}

func (d *pgxDriver) scanCopy(st *step, sk *sink) (int64, error) {
	if d.copyPlan == nil {
		if err := d.describeCopy(st.sql); err != nil {
			return 0, err
		}
	}
	plan := d.copyPlan
	r := &copyReader{sk: sk, plan: plan, m: d.conn.TypeMap(), binary: d.copyOut == "binary", first: true,
		raw: make([][]byte, len(plan.oids)), spans: make([][2]int, len(plan.oids))}
	if _, err := d.conn.PgConn().CopyTo(ctx, r, d.copySQL); err != nil {
		return 0, err
	}
	st.ncols = len(plan.oids)
	return r.rows, nil
}
