//! The byte kernels against the scalar reference, the quantization round trip, and top-k over a
//! quantized matrix.

use proptest::prelude::*;

use super::*;

/// Relative error allowed between a byte kernel and the scalar reference.
const REL_TOL: f32 = 1e-5;

fn unit(mut v: Vec<f32>) -> Vec<f32> {
    normalize(&mut v);
    v
}

fn dims() -> impl Strategy<Value = usize> {
    prop_oneof![4 => 1usize..1100, 1 => Just(384usize), 1 => Just(512usize)]
}

fn bytes_and_query() -> impl Strategy<Value = (Vec<i8>, Vec<f32>)> {
    dims().prop_flat_map(|dim| {
        (
            prop::collection::vec(-127i8..=127, dim),
            prop::collection::vec(-1.0f32..1.0, dim),
        )
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn every_kernel_dot_i8_matches_scalar((row, query) in bytes_and_query()) {
        let want = Kernel::Scalar.dot_i8(&row, &query);
        let exact: f64 = row.iter().zip(&query).map(|(&x, &y)| f64::from(x) * f64::from(y)).sum();
        let mag: f32 = row.iter().zip(&query).map(|(&x, &y)| (f32::from(x) * y).abs()).sum();
        let bound = REL_TOL * mag.max(f32::MIN_POSITIVE);
        prop_assert!((want - exact as f32).abs() <= bound, "scalar {want} vs exact {exact}");
        for kernel in Kernel::available() {
            let got = kernel.dot_i8(&row, &query);
            prop_assert!((got - want).abs() <= bound, "{}: {got} vs {want}", kernel.name());
        }
    }

    #[test]
    fn a_scan_scores_each_row_as_its_own_dot(
        (rows, query) in dims().prop_flat_map(|dim| (
            prop::collection::vec(prop::collection::vec(-1.0f32..1.0, dim), 0..9),
            prop::collection::vec(-1.0f32..1.0, dim),
        ))
    ) {
        let dim = query.len();
        let query = unit(query);
        let mut matrix = QuantMatrix::new(dim);
        for row in &rows {
            matrix.push(row).expect("rows have the matrix dim");
        }
        for kernel in Kernel::available() {
            let mut out = vec![0.0; matrix.len()];
            Rows::scan(&matrix, kernel, 0..matrix.len(), &query, &mut out);
            for (row, &got) in out.iter().enumerate() {
                let want = matrix.score(kernel, row, &query).expect("row");
                prop_assert_eq!(got.to_bits(), want.to_bits(), "{} row {}", kernel.name(), row);
            }
        }
    }

    #[test]
    fn quantizing_a_decoded_vector_gives_the_same_bytes_and_scale(
        v in dims().prop_flat_map(|dim| prop::collection::vec(-1.0f32..1.0, dim)),
        magnitude in -20i32..20,
    ) {
        let v: Vec<f32> = v.iter().map(|x| x * 2f32.powi(magnitude)).collect();
        let mut q = vec![0i8; v.len()];
        let scale = quantize(&v, &mut q);
        let decoded = dequantize(&q);
        let mut again = vec![0i8; v.len()];
        let scale_again = quantize(&decoded, &mut again);
        prop_assert_eq!(&q, &again);
        prop_assert_eq!(scale.to_bits(), scale_again.to_bits());
        prop_assert_eq!(scale.to_bits(), quant_scale(&q).to_bits());
        if q.iter().any(|&x| x != 0) {
            let norm: f64 = decoded.iter().map(|&x| f64::from(x) * f64::from(x)).sum::<f64>().sqrt();
            prop_assert!((norm - 1.0).abs() < 1e-5, "decoded length {norm}");
            prop_assert!(q.iter().any(|&x| x.unsigned_abs() == 127), "largest component at ±127");
        }
    }

    #[test]
    fn a_quantized_cosine_stays_within_a_hundredth_of_the_exact_one(
        (a, b) in prop_oneof![Just(384usize), Just(512usize)].prop_flat_map(|dim| (
            prop::collection::vec(-1.0f32..1.0, dim),
            prop::collection::vec(-1.0f32..1.0, dim),
        ))
    ) {
        let (a, b) = (unit(a), unit(b));
        let exact = Kernel::Scalar.dot(&a, &b);
        let mut matrix = QuantMatrix::new(a.len());
        matrix.push(&a).expect("dim");
        let got = matrix.score(Kernel::best(), 0, &b).expect("row");
        prop_assert!((got - exact).abs() <= 0.01, "quantized {got} vs exact {exact}");
    }

    #[test]
    fn top_k_over_quantized_rows_is_the_full_sort_of_their_scores(
        (rows, query, k) in (1usize..40, 0usize..300, 0usize..12).prop_flat_map(|(dim, n, k)| (
            prop::collection::vec(prop::collection::vec(-2i32..=2, dim), n),
            prop::collection::vec(-1.0f32..1.0, dim),
            Just(k),
        ))
    ) {
        let dim = query.len();
        let mut matrix = QuantMatrix::new(dim);
        for row in &rows {
            let row: Vec<f32> = row.iter().map(|&x| x as f32).collect();
            matrix.push(&row).expect("dim");
        }
        let unit_query = unit(query.clone());
        let mut all: Vec<(usize, f32)> = (0..matrix.len())
            .map(|r| (r, matrix.score(Kernel::best(), r, &unit_query).expect("row")))
            .collect();
        all.sort_by(|a, b| b.1.partial_cmp(&a.1).expect("finite").then(a.0.cmp(&b.0)));
        all.truncate(k);
        let serial = TopK::new().parallel_min_rows(usize::MAX).run(&matrix, &query, k).expect("run");
        let parallel = TopK::new().parallel_min_rows(1).run(&matrix, &query, k).expect("run");
        prop_assert_eq!(&serial, &all);
        prop_assert_eq!(&parallel, &all);
    }
}

#[test]
fn swap_remove_moves_the_last_row_with_its_scale() {
    let mut matrix = QuantMatrix::new(3);
    for v in [[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, -3.0]] {
        matrix.push(&v).expect("dim");
    }
    assert_eq!(matrix.swap_remove(0), Some(2));
    assert_eq!(matrix.len(), 2);
    let (bytes, scale) = matrix.get(0).expect("row 0");
    assert_eq!(bytes, &[0, 0, -127]);
    assert!((scale - 1.0 / 127.0).abs() < 1e-9);
    assert_eq!(matrix.swap_remove(1), None);
    assert_eq!(matrix.get(0).expect("row").0, &[0, 0, -127]);
    assert!(matrix.get(1).is_none());
}

#[test]
fn a_zero_vector_is_stored_as_zeros_and_scores_zero() {
    let mut matrix = QuantMatrix::new(4);
    matrix.push(&[0.0; 4]).expect("dim");
    assert_eq!(matrix.get(0), Some((&[0i8; 4][..], 0.0)));
    assert_eq!(matrix.score(Kernel::best(), 0, &[0.5; 4]), Some(0.0));
    assert!(
        matrix.push(&[f32::NAN, 0.0, 0.0, 0.0]).is_err(),
        "non-finite refused"
    );
    assert!(matrix.push(&[1.0; 3]).is_err(), "wrong width refused");
}
