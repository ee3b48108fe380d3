//! Distributions over a range of whole numbers, written as cassandra-stress writes them
//! (`uniform(1..100)`, `gaussian(1..1M,3)`, `~exp(1..10)`, `fixed(5)`, `seq(1..1k)`, with k/m/b
//! suffixes), plus `zipf(min..max,s)` and `hotset(min..max,hot_fraction,hot_share)`. A sample is
//! a pure function of an operation's random bits (and, for `seq`, its sequence number), so a run
//! is reproduced exactly from its seed, and a read that draws the number a write drew finds its row.

/// SplitMix64 over (seed, index, salt): every choice of every operation, well mixed and repeatable.
pub fn mix(seed: u64, index: u64, salt: u64) -> u64 {
    let mut z =
        seed ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ salt.wrapping_mul(0xD1B5_4A32_D192_ED03);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A uniform number in [0, 1) from 53 of the bits.
pub fn unit_float(bits: u64) -> f64 {
    (bits >> 11) as f64 / (1u64 << 53) as f64
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape {
    Uniform,
    /// Normal around the middle; `sd` standard deviations span half the range (cassandra-stress's
    /// `stdvrng`, 3 by default). Samples outside the range are clamped to it.
    Gaussian {
        mean: f64,
        sd: f64,
    },
    /// `min` plus an exponential whose mean is (max-min)/(ln(max-min)/2), clamped (cassandra-stress).
    Exp,
    /// `min` plus a Weibull of this shape (cassandra-stress `extreme`), clamped.
    Extreme {
        shape: f64,
    },
    Fixed,
    /// min, min+1, … max, min, … by the operation's sequence number.
    Seq,
    /// Zipf over the range with this exponent: min is the most frequent.
    Zipf {
        exponent: f64,
    },
    /// `share` of the samples fall uniformly in the first `fraction` of the range, the rest in the rest.
    HotSet {
        fraction: f64,
        share: f64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Distribution {
    pub shape: Shape,
    pub min: i64,
    pub max: i64,
    /// `~`: mirrored, so that max is drawn as often as min was.
    pub inverted: bool,
}

/// The names `parse` takes, for messages.
pub const NAMES: &str = "uniform, gaussian (normal), exp, extreme, fixed, seq, zipf, hotset";

impl Distribution {
    /// `fixed(1)`.
    pub const FIXED_ONE: Distribution = Distribution::fixed(1);

    pub const fn fixed(value: i64) -> Self {
        Distribution {
            shape: Shape::Fixed,
            min: value,
            max: value,
            inverted: false,
        }
    }

    pub fn uniform(min: i64, max: i64) -> Self {
        Distribution {
            shape: Shape::Uniform,
            min,
            max,
            inverted: false,
        }
    }

    /// Parses `[~]name(args)`; the message says what is wrong in the user's terms.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let (inverted, body) = match text.strip_prefix('~') {
            Some(rest) => (true, rest.trim_start()),
            None => (false, text),
        };
        let open = body.find('(').filter(|_| body.ends_with(')')).ok_or_else(|| {
            format!("'{text}' is not a distribution: write NAME(ARGS), e.g. uniform(1..1000) (one of {NAMES})")
        })?;
        let name = body[..open].trim().to_ascii_lowercase();
        let args: Vec<&str> = body[open + 1..body.len() - 1]
            .split(',')
            .map(str::trim)
            .collect();
        let (shape, (min, max)) = shape(text, &name, &args)?;
        if min > max {
            return Err(format!(
                "'{text}': the range's minimum is above its maximum"
            ));
        }
        Ok(Distribution {
            shape,
            min,
            max,
            inverted,
        })
    }

    /// How many distinct values the distribution can give.
    pub fn span(&self) -> u64 {
        (self.max as i128 - self.min as i128 + 1) as u64
    }

    /// The sample of an operation with sequence number `seq` and random `bits`.
    pub fn sample(&self, seq: u64, bits: u64) -> i64 {
        let v = self.raw(seq, bits);
        if self.inverted {
            self.max - (v - self.min)
        } else {
            v
        }
    }

    fn raw(&self, seq: u64, bits: u64) -> i64 {
        let (min, max) = (self.min, self.max);
        let span = self.span();
        let clamp = |x: f64| x.round().clamp(min as f64, max as f64) as i64;
        let offset = |k: u64| (min as i128 + k as i128) as i64;
        match self.shape {
            Shape::Fixed => min,
            Shape::Uniform => offset(bits % span.max(1)),
            Shape::Seq => offset(seq % span.max(1)),
            Shape::Gaussian { mean, sd } => {
                let u1 = unit_float(bits).max(f64::MIN_POSITIVE);
                let u2 = unit_float(mix(bits, 1, 0));
                let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
                clamp(mean + z * sd)
            }
            Shape::Exp => {
                let width = (max - min) as f64;
                let mean = if width > 1.0 {
                    width / (0.5 * width.ln())
                } else {
                    1.0
                };
                let u = unit_float(bits).max(f64::MIN_POSITIVE);
                clamp(min as f64 - mean * u.ln())
            }
            Shape::Extreme { shape } => {
                let width = (max - min) as f64;
                let scale = if width > 1.0 {
                    width / (0.5 * width.ln()).powf(1.0 / shape)
                } else {
                    1.0
                };
                let u = unit_float(bits).max(f64::MIN_POSITIVE);
                clamp(min as f64 + scale * (-u.ln()).powf(1.0 / shape))
            }
            Shape::Zipf { exponent } => offset(zipf(span, exponent, bits) - 1),
            Shape::HotSet { fraction, share } => {
                let hot = ((span as f64 * fraction).round() as u64).clamp(1, span);
                let cold = span - hot;
                let pick = mix(bits, 2, 0);
                if cold == 0 || unit_float(bits) < share {
                    offset(pick % hot)
                } else {
                    offset(hot + pick % cold)
                }
            }
        }
    }
}

/// The shape and range `name(args)` stands for (`text`: the whole spelling, for messages).
fn shape(text: &str, name: &str, args: &[&str]) -> Result<(Shape, (i64, i64)), String> {
    let shape_and_range = match name {
        "fixed" => {
            expect_args(text, args, 1, 1)?;
            let v = number(text, args[0])?;
            return Ok((Shape::Fixed, (v, v)));
        }
        "uniform" => (Shape::Uniform, range_args(text, args, 0)?),
        "gaussian" | "gauss" | "normal" | "norm" => {
            let ((min, max), extra) = range_args(text, args, 2)?;
            let mid = (min as f64 + max as f64) / 2.0;
            let half = (max as f64 - min as f64) / 2.0;
            let shape = match extra.as_slice() {
                [] => Shape::Gaussian {
                    mean: mid,
                    sd: half / 3.0,
                },
                [sds] => Shape::Gaussian {
                    mean: mid,
                    sd: half / positive(text, *sds)?,
                },
                [mean, sd] => Shape::Gaussian {
                    mean: *mean,
                    sd: positive(text, *sd)?,
                },
                _ => unreachable!("range_args caps the count"),
            };
            (shape, ((min, max), Vec::new()))
        }
        "exp" => (Shape::Exp, range_args(text, args, 0)?),
        "extreme" | "extr" => {
            let ((min, max), extra) = range_args(text, args, 1)?;
            let [shape] = extra.as_slice() else {
                return Err(format!("'{text}': extreme takes (min..max, shape)"));
            };
            (
                Shape::Extreme {
                    shape: positive(text, *shape)?,
                },
                ((min, max), Vec::new()),
            )
        }
        "seq" | "sequence" => (Shape::Seq, range_args(text, args, 0)?),
        "zipf" => {
            let ((min, max), extra) = range_args(text, args, 1)?;
            let exponent = match extra.as_slice() {
                [] => 1.0,
                [s] => positive(text, *s)?,
                _ => unreachable!("range_args caps the count"),
            };
            (Shape::Zipf { exponent }, ((min, max), Vec::new()))
        }
        "hotset" => {
            let ((min, max), extra) = range_args(text, args, 2)?;
            let [fraction, share] = extra.as_slice() else {
                return Err(format!(
                    "'{text}': hotset takes (min..max, hot fraction of the keys, share of the draws), e.g. hotset(1..1M,0.1,0.9)"
                ));
            };
            let unit = |v: f64| {
                (0.0..=1.0)
                    .contains(&v)
                    .then_some(v)
                    .ok_or_else(|| format!("'{text}': fractions must be between 0 and 1"))
            };
            (
                Shape::HotSet {
                    fraction: unit(*fraction)?,
                    share: unit(*share)?,
                },
                ((min, max), Vec::new()),
            )
        }
        other => {
            return Err(format!(
                "'{text}': unknown distribution '{other}' (one of {NAMES})"
            ))
        }
    };
    let (shape, (range, _)) = shape_and_range;
    Ok((shape, range))
}

fn expect_args(text: &str, args: &[&str], min: usize, max: usize) -> Result<(), String> {
    if (min..=max).contains(&args.len()) && args.iter().all(|a| !a.is_empty()) {
        Ok(())
    } else {
        Err(format!("'{text}': wrong number of arguments"))
    }
}

/// `min..max` followed by up to `extra` decimal arguments.
type RangeArgs = ((i64, i64), Vec<f64>);

fn range_args(text: &str, args: &[&str], extra: usize) -> Result<RangeArgs, String> {
    expect_args(text, args, 1, 1 + extra)?;
    let (low, high) = args[0]
        .split_once("..")
        .ok_or_else(|| format!("'{text}': expected a range min..max, e.g. uniform(1..1000)"))?;
    let high = high.trim_start_matches('.');
    let range = (number(text, low)?, number(text, high)?);
    let rest = args[1..]
        .iter()
        .map(|a| {
            a.parse::<f64>()
                .map_err(|_| format!("'{text}': '{a}' is not a number"))
        })
        .collect::<Result<_, _>>()?;
    Ok((range, rest))
}

fn positive(text: &str, v: f64) -> Result<f64, String> {
    if v > 0.0 && v.is_finite() {
        Ok(v)
    } else {
        Err(format!("'{text}': {v} must be above 0"))
    }
}

/// A whole number with an optional k, m or b suffix (powers of 1000), possibly negative.
fn number(text: &str, arg: &str) -> Result<i64, String> {
    let arg = arg.trim();
    let (negative, digits) = match arg.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, arg),
    };
    let value = cqlbench_units::parse_count(digits)
        .ok()
        .and_then(|v| i64::try_from(v).ok())
        .ok_or_else(|| {
            format!("'{text}': '{arg}' is not a whole number (k, m and b suffixes allowed)")
        })?;
    Ok(if negative { -value } else { value })
}

/// A Zipf rank in 1..=n with exponent `s` (rank 1 the most frequent), by rejection-inversion
/// (Hörmann and Derflinger), drawing further uniforms from `bits` as it needs them.
fn zipf(n: u64, s: f64, bits: u64) -> u64 {
    if n <= 1 {
        return 1;
    }
    let h = |x: f64| {
        let log = x.ln();
        if (1.0 - s).abs() < 1e-9 {
            log
        } else {
            ((1.0 - s) * log).exp_m1() / (1.0 - s)
        }
    };
    let h_inv = |x: f64| {
        let t = if (1.0 - s).abs() < 1e-9 {
            x
        } else {
            (x * (1.0 - s)).ln_1p() / (1.0 - s)
        };
        t.exp()
    };
    let h_integral_x1 = h(1.5) - 1.0;
    let h_integral_n = h(n as f64 + 0.5);
    let threshold = 2.0 - h_inv(h(2.5) - (2.0f64).powf(-s));
    for attempt in 0..64 {
        let u = h_integral_n + unit_float(mix(bits, attempt, 3)) * (h_integral_x1 - h_integral_n);
        let x = h_inv(u);
        let k = (x + 0.5).floor().clamp(1.0, n as f64);
        if k - x <= threshold || u >= h(k + 0.5) - (k).powf(-s) {
            return k as u64;
        }
    }
    1
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draws(d: &Distribution, n: u64) -> Vec<i64> {
        (0..n).map(|i| d.sample(i, mix(7, i, 11))).collect()
    }

    #[test]
    fn cassandra_stress_spellings_parse() {
        let d = Distribution::parse("uniform(1..100k)").unwrap();
        assert_eq!((d.min, d.max, d.shape), (1, 100_000, Shape::Uniform));
        let g = Distribution::parse("gaussian(1..1M,5)").unwrap();
        assert!(matches!(g.shape, Shape::Gaussian { sd, .. } if (sd - 100_000.0).abs() < 1.0));
        assert!(Distribution::parse("~exp(1..10)").unwrap().inverted);
        assert_eq!(
            Distribution::parse("FIXED(7)").unwrap(),
            Distribution::fixed(7)
        );
        assert_eq!(Distribution::parse("seq(1...5)").unwrap().max, 5);
        assert_eq!(Distribution::parse("uniform(-5..5)").unwrap().min, -5);
    }

    #[test]
    fn bad_distributions_say_what_is_wrong() {
        for (text, says) in [
            ("uniform", "NAME(ARGS)"),
            ("weibull(1..3,2)", "unknown distribution 'weibull'"),
            ("uniform(10..1)", "minimum is above"),
            ("uniform(1..x)", "not a whole number"),
            ("fixed()", "wrong number"),
            ("hotset(1..10,2,0.5)", "between 0 and 1"),
        ] {
            let e = Distribution::parse(text).unwrap_err();
            assert!(e.contains(says), "{text}: {e}");
        }
    }

    #[test]
    fn samples_stay_in_range_with_the_promised_shape() {
        let n = 20_000;
        for text in [
            "uniform(1..1000)",
            "gaussian(1..1000)",
            "exp(1..1000)",
            "extreme(1..1000,1.5)",
            "zipf(1..1000,1.1)",
            "hotset(1..1000,0.1,0.9)",
            "~exp(1..1000)",
        ] {
            let d = Distribution::parse(text).unwrap();
            assert!(
                draws(&d, n).iter().all(|v| (1..=1000).contains(v)),
                "{text}"
            );
        }
        let mean = |d: &str| {
            let v = draws(&Distribution::parse(d).unwrap(), n);
            v.iter().sum::<i64>() as f64 / v.len() as f64
        };
        assert!((mean("uniform(1..1000)") - 500.5).abs() < 15.0);
        assert!((mean("gaussian(1..1000)") - 500.5).abs() < 10.0);
        assert!(mean("exp(1..1000)") < 400.0);
        assert!(mean("~exp(1..1000)") > 600.0);
        // Zipf: rank 1 is the most frequent, far above the uniform's 1 in 1000.
        let z = draws(&Distribution::parse("zipf(1..1000,1.1)").unwrap(), n);
        let ones = z.iter().filter(|&&v| v == 1).count() as f64 / n as f64;
        assert!(ones > 0.1, "{ones}");
        // Hot set: 90 % of draws in the first 100 keys.
        let h = draws(&Distribution::parse("hotset(1..1000,0.1,0.9)").unwrap(), n);
        let hot = h.iter().filter(|&&v| v <= 100).count() as f64 / n as f64;
        assert!((hot - 0.9).abs() < 0.02, "{hot}");
    }

    #[test]
    fn seq_follows_the_sequence_number_and_fixed_never_moves() {
        let s = Distribution::parse("seq(1..3)").unwrap();
        assert_eq!(
            (0..7).map(|i| s.sample(i, 12345)).collect::<Vec<_>>(),
            [1, 2, 3, 1, 2, 3, 1]
        );
        assert!(draws(&Distribution::fixed(4), 100).iter().all(|&v| v == 4));
    }
}
