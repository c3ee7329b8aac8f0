//! A minimal Apache Parquet writer: one row group, one uncompressed PLAIN
//! data page (v1) per column, every column OPTIONAL, three physical types
//! (BYTE_ARRAY as UTF-8 strings, INT64, DOUBLE). It exists so that `schedlab
//! sweep` writes its dataset without pulling the `parquet`/`arrow` crates
//! into the build; a sweep's table is small (one row per run).
//!
//! Layout (Parquet format specification, "File format" and "Data pages"):
//! `PAR1`, then per column a page header and the page (definition levels as
//! a 4-byte length plus the RLE/bit-packing hybrid at bit width 1, then the
//! non-null values), then the `FileMetaData`, its 4-byte little-endian
//! length and `PAR1`. Headers and metadata are Thrift compact protocol
//! structs, written by the small encoder below (field ids from the
//! specification's parquet.thrift).

use std::io::Write;
use std::path::Path;

/// One column's values, `None` for null.
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    /// UTF-8 strings (BYTE_ARRAY, converted type UTF8).
    Str(Vec<Option<String>>),
    /// 64-bit integers (INT64).
    I64(Vec<Option<i64>>),
    /// 64-bit floats (DOUBLE).
    F64(Vec<Option<f64>>),
}

impl Column {
    fn len(&self) -> usize {
        match self {
            Column::Str(v) => v.len(),
            Column::I64(v) => v.len(),
            Column::F64(v) => v.len(),
        }
    }
    fn physical_type(&self) -> i32 {
        match self {
            Column::Str(_) => 6, // BYTE_ARRAY
            Column::I64(_) => 2, // INT64
            Column::F64(_) => 5, // DOUBLE
        }
    }
    fn defined(&self) -> Vec<bool> {
        match self {
            Column::Str(v) => v.iter().map(Option::is_some).collect(),
            Column::I64(v) => v.iter().map(Option::is_some).collect(),
            Column::F64(v) => v.iter().map(Option::is_some).collect(),
        }
    }
    fn plain_values(&self) -> Vec<u8> {
        let mut out = Vec::new();
        match self {
            Column::Str(v) => {
                for s in v.iter().flatten() {
                    out.extend_from_slice(&(s.len() as u32).to_le_bytes());
                    out.extend_from_slice(s.as_bytes());
                }
            }
            Column::I64(v) => v
                .iter()
                .flatten()
                .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
            Column::F64(v) => v
                .iter()
                .flatten()
                .for_each(|x| out.extend_from_slice(&x.to_le_bytes())),
        }
        out
    }
}

/// Thrift compact protocol, the subset Parquet's metadata needs.
struct Thrift {
    buf: Vec<u8>,
    last: Vec<i16>,
}

const T_I32: u8 = 5;
const T_I64: u8 = 6;
const T_BINARY: u8 = 8;
const T_LIST: u8 = 9;
const T_STRUCT: u8 = 12;

impl Thrift {
    fn new() -> Self {
        Thrift {
            buf: Vec::new(),
            last: vec![0],
        }
    }
    fn varint(&mut self, mut v: u64) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                self.buf.push(b);
                return;
            }
            self.buf.push(b | 0x80);
        }
    }
    fn zigzag(&mut self, v: i64) {
        self.varint(((v << 1) ^ (v >> 63)) as u64);
    }
    fn field(&mut self, id: i16, ty: u8) {
        let last = self.last.last_mut().expect("struct stack");
        let delta = id - *last;
        *last = id;
        if (1..=15).contains(&delta) {
            self.buf.push(((delta as u8) << 4) | ty);
        } else {
            self.buf.push(ty);
            self.zigzag(id as i64);
        }
    }
    fn i32(&mut self, id: i16, v: i32) {
        self.field(id, T_I32);
        self.zigzag(v as i64);
    }
    fn i64(&mut self, id: i16, v: i64) {
        self.field(id, T_I64);
        self.zigzag(v);
    }
    fn string(&mut self, id: i16, s: &str) {
        self.field(id, T_BINARY);
        self.varint(s.len() as u64);
        self.buf.extend_from_slice(s.as_bytes());
    }
    fn list_header(&mut self, id: i16, elem: u8, n: usize) {
        self.field(id, T_LIST);
        if n < 15 {
            self.buf.push(((n as u8) << 4) | elem);
        } else {
            self.buf.push(0xf0 | elem);
            self.varint(n as u64);
        }
    }
    /// Begins a struct as a field (`id`) or as a list element (`None`).
    fn begin(&mut self, id: Option<i16>) {
        if let Some(id) = id {
            self.field(id, T_STRUCT);
        }
        self.last.push(0);
    }
    fn end(&mut self) {
        self.buf.push(0);
        self.last.pop();
    }
}

/// The definition levels (0 null, 1 present) as the RLE/bit-packing
/// hybrid at bit width 1, RLE runs only, with the v1 page's 4-byte length.
fn def_levels(defined: &[bool]) -> Vec<u8> {
    let mut rle = Thrift::new();
    let mut i = 0;
    while i < defined.len() {
        let v = defined[i];
        let mut j = i;
        while j < defined.len() && defined[j] == v {
            j += 1;
        }
        rle.varint(((j - i) as u64) << 1);
        rle.buf.push(v as u8);
        i = j;
    }
    let mut out = (rle.buf.len() as u32).to_le_bytes().to_vec();
    out.extend_from_slice(&rle.buf);
    out
}

/// Writes `columns` (equal lengths, at least one row) as one Parquet file
/// at `path`.
pub fn write_file(path: &Path, columns: &[(String, Column)]) -> std::io::Result<()> {
    let bytes = encode(columns);
    let mut f = std::fs::File::create(path)?;
    f.write_all(&bytes)?;
    f.sync_all()
}

/// The bytes of a Parquet file holding `columns`.
pub fn encode(columns: &[(String, Column)]) -> Vec<u8> {
    let rows = columns.first().map_or(0, |(_, c)| c.len());
    assert!(
        columns.iter().all(|(_, c)| c.len() == rows),
        "ragged columns"
    );
    let mut out = b"PAR1".to_vec();
    // Per column: (offset, size, number of values).
    let mut chunks = Vec::new();
    for (_, col) in columns {
        let mut page = def_levels(&col.defined());
        page.extend_from_slice(&col.plain_values());
        let mut h = Thrift::new();
        h.i32(1, 0); // type: DATA_PAGE
        h.i32(2, page.len() as i32); // uncompressed_page_size
        h.i32(3, page.len() as i32); // compressed_page_size
        h.begin(Some(5)); // data_page_header
        h.i32(1, rows as i32); // num_values (nulls included)
        h.i32(2, 0); // encoding: PLAIN
        h.i32(3, 3); // definition_level_encoding: RLE
        h.i32(4, 3); // repetition_level_encoding: RLE
        h.end();
        h.buf.push(0); // end of PageHeader
        let offset = out.len();
        out.extend_from_slice(&h.buf);
        out.extend_from_slice(&page);
        chunks.push((offset, out.len() - offset));
    }
    let mut m = Thrift::new();
    m.i32(1, 1); // version
    m.list_header(2, T_STRUCT, columns.len() + 1); // schema
    m.begin(None);
    m.string(4, "schema");
    m.i32(5, columns.len() as i32);
    m.end();
    for (name, col) in columns {
        m.begin(None);
        m.i32(1, col.physical_type());
        m.i32(3, 1); // repetition_type: OPTIONAL
        m.string(4, name);
        if let Column::Str(_) = col {
            m.i32(6, 0); // converted_type: UTF8
        }
        m.end();
    }
    m.i64(3, rows as i64); // num_rows
    m.list_header(4, T_STRUCT, 1); // row_groups
    m.begin(None);
    m.list_header(1, T_STRUCT, columns.len()); // columns
    let mut total = 0i64;
    for ((name, col), (offset, size)) in columns.iter().zip(&chunks) {
        total += *size as i64;
        m.begin(None);
        m.i64(2, *offset as i64); // file_offset
        m.begin(Some(3)); // meta_data
        m.i32(1, col.physical_type());
        m.list_header(2, T_I32, 2); // encodings: PLAIN, RLE
        m.zigzag(0);
        m.zigzag(3);
        m.list_header(3, T_BINARY, 1); // path_in_schema
        m.varint(name.len() as u64);
        m.buf.extend_from_slice(name.as_bytes());
        m.i32(4, 0); // codec: UNCOMPRESSED
        m.i64(5, rows as i64); // num_values
        m.i64(6, *size as i64); // total_uncompressed_size
        m.i64(7, *size as i64); // total_compressed_size
        m.i64(9, *offset as i64); // data_page_offset
        m.end();
        m.end();
    }
    m.i64(2, total); // total_byte_size
    m.i64(3, rows as i64); // num_rows
    m.end();
    m.string(6, concat!("schedlab ", env!("CARGO_PKG_VERSION")));
    m.buf.push(0); // end of FileMetaData
    out.extend_from_slice(&m.buf);
    out.extend_from_slice(&(m.buf.len() as u32).to_le_bytes());
    out.extend_from_slice(b"PAR1");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_is_framed_and_deterministic() {
        let cols = vec![
            (
                "s".to_string(),
                Column::Str(vec![Some("a".into()), None, Some("ccc".into())]),
            ),
            ("i".to_string(), Column::I64(vec![Some(1), Some(-2), None])),
            ("f".to_string(), Column::F64(vec![None, None, Some(0.5)])),
        ];
        let a = encode(&cols);
        assert_eq!(&a[..4], b"PAR1");
        assert_eq!(&a[a.len() - 4..], b"PAR1");
        let n = u32::from_le_bytes(a[a.len() - 8..a.len() - 4].try_into().unwrap()) as usize;
        assert!(n < a.len() - 12);
        assert_eq!(a, encode(&cols));
    }

    #[test]
    fn definition_levels_are_rle_runs() {
        // 2 present, 1 null: runs (2,1) and (1,0), 4 bytes, length prefix 4.
        assert_eq!(
            def_levels(&[true, true, false]),
            vec![4, 0, 0, 0, 4, 1, 2, 0]
        );
    }

    #[test]
    fn field_ids_with_long_jumps_use_the_long_form() {
        let mut t = Thrift::new();
        t.i32(1, 1);
        t.i32(20, 1);
        assert_eq!(t.buf, vec![0x15, 2, 0x05, 40, 2]);
    }
}
