//! Just enough JSON to write the ready line and the stats file (serde_json
//! is not packaged in Debian's crate set this program builds from).

use std::fmt::Write;

/// A JSON object, written in the order its members were added.
#[derive(Debug, Default, Clone)]
pub struct Obj {
    members: Vec<(String, String)>,
}

impl Obj {
    pub fn new() -> Self {
        Obj::default()
    }

    pub fn raw(&mut self, key: &str, json: &str) -> &mut Self {
        self.members.push((key.to_string(), json.to_string()));
        self
    }

    pub fn str(&mut self, key: &str, v: &str) -> &mut Self {
        self.raw(key, &string(v))
    }

    pub fn num(&mut self, key: &str, v: u64) -> &mut Self {
        self.raw(key, &v.to_string())
    }

    pub fn bool(&mut self, key: &str, v: bool) -> &mut Self {
        self.raw(key, if v { "true" } else { "false" })
    }

    pub fn obj(&mut self, key: &str, v: &Obj) -> &mut Self {
        self.raw(key, &v.render())
    }

    pub fn render(&self) -> String {
        let parts: Vec<String> = self.members.iter().map(|(k, v)| format!("{}:{}", string(k), v)).collect();
        format!("{{{}}}", parts.join(","))
    }
}

/// A JSON string.
pub fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

pub fn ints(v: &[i32]) -> String {
    format!("[{}]", v.iter().map(|i| i.to_string()).collect::<Vec<_>>().join(","))
}

pub fn array(items: &[String]) -> String {
    format!("[{}]", items.join(","))
}
