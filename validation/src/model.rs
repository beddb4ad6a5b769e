//! Replay models of `tf analyze` compared against a GPU: a model is a name
//! such as `ipdom`, `min-pc+predicate4` or `ipdom+spin`, and stands for the
//! `tf analyze` options it names.

use anyhow::{bail, Result};

/// One model setting: its name as given and the `tf analyze` options.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Model {
    /// The name, as in `--models`.
    pub name: String,
    /// The options passed to `tf analyze`.
    pub args: Vec<String>,
}

impl Model {
    /// Reads a model name: parts joined by `+`; `predicateN` stands for
    /// `--predicate N`, `spin` and `serialize` for `--lock-model`,
    /// `merge-tails` for `--merge-tails`, anything else for `--reconverge`
    /// (tf itself rejects a model it does not know).
    ///
    /// ```
    /// use tf_validate::model::Model;
    /// let m = Model::parse("ipdom+predicate4+spin").unwrap();
    /// assert_eq!(m.args, ["--reconverge", "ipdom", "--predicate", "4", "--lock-model", "spin"]);
    /// assert_eq!(Model::parse("min-pc").unwrap().args, ["--reconverge", "min-pc"]);
    /// assert!(Model::parse("none+min-pc").is_err());
    /// assert!(Model::parse("ipdom+predicate").is_err());
    /// ```
    pub fn parse(name: &str) -> Result<Model> {
        let mut args = Vec::new();
        let (mut reconverge, mut predicate, mut locks) = (false, false, false);
        let mut merge_tails = false;
        for part in name.split('+') {
            let ok_chars = part
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            if part.is_empty() || !ok_chars {
                bail!("--models {name}: {part:?} is not a model part");
            }
            let (seen, option, value) = if let Some(n) = part.strip_prefix("predicate") {
                if n.parse::<u32>().is_err() {
                    bail!("--models {name}: {part:?} needs a number of instructions (predicate4)");
                }
                (&mut predicate, "--predicate", n)
            } else if part == "merge-tails" {
                if std::mem::replace(&mut merge_tails, true) {
                    bail!("--models {name}: merge-tails twice");
                }
                args.push("--merge-tails".to_string());
                continue;
            } else if part == "spin" || part == "serialize" {
                (&mut locks, "--lock-model", part)
            } else {
                (&mut reconverge, "--reconverge", part)
            };
            if *seen {
                bail!("--models {name}: two settings for {option}");
            }
            *seen = true;
            args.extend([option.to_string(), value.to_string()]);
        }
        Ok(Model {
            name: name.to_string(),
            args,
        })
    }

    /// Reads a list of names, rejecting repeats.
    pub fn parse_all(names: &[String]) -> Result<Vec<Model>> {
        let mut models: Vec<Model> = Vec::new();
        for n in names {
            if models.iter().any(|m| &m.name == n) {
                bail!("--models {n}: given twice");
            }
            models.push(Model::parse(n)?);
        }
        Ok(models)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_become_analyze_options_in_order() {
        let m = Model::parse("spin").unwrap();
        assert_eq!(m.args, ["--lock-model", "spin"]);
        assert_eq!(
            Model::parse("none+predicate12").unwrap().args,
            ["--reconverge", "none", "--predicate", "12"]
        );
        assert!(Model::parse("ipdom+spin+serialize").is_err());
        assert_eq!(
            Model::parse("ipdom+merge-tails").unwrap().args,
            ["--reconverge", "ipdom", "--merge-tails"]
        );
        assert!(Model::parse("merge-tails+merge-tails").is_err());
        assert!(Model::parse("ipdom++spin").is_err());
        assert!(Model::parse("a b").is_err());
        let names = ["ipdom".to_string(), "ipdom".to_string()];
        assert!(Model::parse_all(&names).is_err());
    }
}
