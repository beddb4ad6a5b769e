//! A line split into its whitespace-separated tokens, and hex fields
//! read, as the checks' general reading of a line ([`super::insn`]) takes
//! them: as the library would, in less time.

/// The whitespace-separated tokens of a line, as `str::split_whitespace`
/// gives them: an ASCII line (all but broken ones) is split on its bytes,
/// without decoding characters.
pub(super) enum Tokens<'a> {
    Ascii(&'a str),
    Other(std::str::SplitWhitespace<'a>),
}

impl<'a> Tokens<'a> {
    pub(super) fn of(text: &'a str) -> Tokens<'a> {
        if text.is_ascii() {
            Tokens::Ascii(text)
        } else {
            Tokens::Other(text.split_whitespace())
        }
    }
}

impl<'a> Iterator for Tokens<'a> {
    type Item = &'a str;

    #[inline]
    fn next(&mut self) -> Option<&'a str> {
        let rest = match self {
            Tokens::Ascii(rest) => rest,
            Tokens::Other(words) => return words.next(),
        };
        // the ASCII characters that `char::is_whitespace` takes
        let space = |c: u8| c == b' ' || (b'\t'..=b'\r').contains(&c);
        let b = rest.as_bytes();
        let mut i = 0;
        while i < b.len() && space(b[i]) {
            i += 1;
        }
        let start = i;
        while i < b.len() && !space(b[i]) {
            i += 1;
        }
        let token = &rest[start..i];
        *rest = &rest[i..];
        (!token.is_empty()).then_some(token)
    }
}

/// `t` (with or without `0x`) read as hex, as `u64::from_str_radix(t, 16)`
/// reads it (a `+` sign allowed), digit by digit: most of a line's fields
/// are hex, and the library's general parse was a seventh of the check.
pub(super) fn hex(t: &str) -> Option<u64> {
    let t = t
        .strip_prefix("0x")
        .or_else(|| t.strip_prefix("0X"))
        .unwrap_or(t);
    let digits = t.strip_prefix('+').unwrap_or(t);
    if digits.is_empty() {
        return None;
    }
    digits.bytes().try_fold(0u64, |v, b| {
        let d = char::from(b).to_digit(16)?;
        (v >> 60 == 0).then_some(v << 4 | u64::from(d))
    })
}

#[cfg(test)]
mod tests {
    use super::{hex, Tokens};

    /// Random strings of `alphabet`'s characters, up to 24 long.
    fn strings(alphabet: &[char], n: usize) -> Vec<String> {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        (0..n)
            .map(|_| {
                let len = next() % 25;
                (0..len)
                    .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                    .collect()
            })
            .collect()
    }

    #[test]
    fn hex_reads_as_the_library_does() {
        let alphabet: Vec<char> = "0000fFaA9+-xXg ".chars().collect();
        for s in strings(&alphabet, 50_000) {
            let t = s
                .strip_prefix("0x")
                .or_else(|| s.strip_prefix("0X"))
                .unwrap_or(&s);
            assert_eq!(hex(&s), u64::from_str_radix(t, 16).ok(), "{s:?}");
        }
        assert_eq!(hex("0x0000ffffffffffffffff"), Some(u64::MAX));
        assert_eq!(hex("1ffffffffffffffff"), None);
        assert_eq!(hex("+"), None);
    }

    #[test]
    fn tokens_are_those_of_split_whitespace() {
        let alphabet: Vec<char> = "ab \t\n\u{b}\u{c}\r\u{1c}\u{85}\u{a0}é".chars().collect();
        for s in strings(&alphabet, 50_000) {
            let ours: Vec<&str> = Tokens::of(&s).collect();
            assert_eq!(ours, s.split_whitespace().collect::<Vec<_>>(), "{s:?}");
        }
    }
}
