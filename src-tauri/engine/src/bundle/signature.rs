//! The signature `mcpb sign` appends after the zip: `MCPB_SIG_V1`, the
//! length of the DER (u32, little-endian), a detached PKCS#7 SignedData over
//! every byte before the block, then `MCPB_SIG_END`. The block is found and
//! stripped before the zip is read; the CMS signature is checked here (the
//! content's SHA-256 against the signed `messageDigest`, and the RSA
//! signature over the signed attributes), then whether the signer's chain
//! (with the certificates the block carries) leads to a root the system
//! trusts for code signing (rustls-webpki, the system's roots). Revocation is
//! not checked.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};

use cms::cert::CertificateChoices;
use cms::content_info::ContentInfo;
use cms::signed_data::{SignedData, SignerIdentifier};
use rsa::pkcs8::DecodePublicKey;
use rsa::{Pkcs1v15Sign, RsaPublicKey};
use sha2::{Digest, Sha256};
use x509_cert::der::asn1::ObjectIdentifier;
use x509_cert::der::{Decode, Encode, Tag, Tagged};
use x509_cert::Certificate;

const HEADER: &[u8] = b"MCPB_SIG_V1";
const FOOTER: &[u8] = b"MCPB_SIG_END";
/// A PKCS#7 block larger than this is not a signature.
const MAX_SIGNATURE: u64 = 1024 * 1024;

const ID_SIGNED_DATA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.7.2");
const ID_SHA256: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.1");
const ID_MESSAGE_DIGEST: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.4");
const RSA_ENCRYPTION: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.1");
const SHA256_WITH_RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.11");

/// What the bundle's signature says. Only `SelfSigned` and `Signed` mean the
/// signature matched the content; neither means the signer is trusted.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum SignatureStatus {
    Unsigned,
    /// Valid, by a certificate that signed itself: anyone can make one.
    SelfSigned {
        subject: String,
        fingerprint: String,
    },
    /// Valid, by a certificate issued by `issuer`; `trusted` when its chain
    /// leads to a trusted root for code signing, else `untrusted` says why.
    Signed {
        subject: String,
        issuer: String,
        fingerprint: String,
        trusted: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        #[cfg_attr(feature = "ts", ts(optional))]
        untrusted: Option<String>,
    },
    /// A signature block that does not match the content or cannot be read.
    Invalid {
        reason: String,
    },
}

impl SignatureStatus {
    pub fn is_invalid(&self) -> bool {
        matches!(self, SignatureStatus::Invalid { .. })
    }
}

impl std::fmt::Display for SignatureStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SignatureStatus::Unsigned => write!(f, "unsigned"),
            SignatureStatus::SelfSigned { subject, .. } => {
                write!(f, "signed (self-signed by {subject}, not trusted)")
            }
            SignatureStatus::Signed {
                subject,
                trusted: true,
                ..
            } => write!(f, "signed by {subject} (trusted)"),
            SignatureStatus::Signed {
                subject, untrusted, ..
            } => write!(
                f,
                "signed by {subject} (not trusted: {})",
                untrusted.as_deref().unwrap_or("no trusted root")
            ),
            SignatureStatus::Invalid { reason } => write!(f, "invalid ({reason})"),
        }
    }
}

/// The certificates a signer's chain may end at.
#[derive(Clone)]
pub struct TrustRoots(std::sync::Arc<Vec<rustls_pki_types::CertificateDer<'static>>>);

impl std::fmt::Debug for TrustRoots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TrustRoots({} certificates)", self.0.len())
    }
}

impl TrustRoots {
    /// The system's roots (read once per process).
    pub fn system() -> TrustRoots {
        static ROOTS: std::sync::OnceLock<TrustRoots> = std::sync::OnceLock::new();
        ROOTS
            .get_or_init(|| {
                TrustRoots(std::sync::Arc::new(
                    rustls_native_certs::load_native_certs().certs,
                ))
            })
            .clone()
    }

    /// These DER certificates only (tests, a company's own root).
    pub fn from_der(certs: Vec<Vec<u8>>) -> TrustRoots {
        TrustRoots(std::sync::Arc::new(
            certs
                .into_iter()
                .map(rustls_pki_types::CertificateDer::from)
                .collect(),
        ))
    }

    /// `None` when the chain of `leaf` (with `others` as intermediates)
    /// leads to one of these roots for code signing, else why not.
    fn why_untrusted(&self, leaf: &[u8], others: &[Vec<u8>]) -> Option<String> {
        use rustls_pki_types::{CertificateDer, UnixTime};
        // id-kp-codeSigning, 1.3.6.1.5.5.7.3.3, as DER content bytes.
        const CODE_SIGNING: &[u8] = &[0x2b, 0x06, 0x01, 0x05, 0x05, 0x07, 0x03, 0x03];
        let anchors: Vec<_> = self
            .0
            .iter()
            .filter_map(|c| webpki::anchor_from_trusted_cert(c).ok())
            .collect();
        let leaf = CertificateDer::from(leaf);
        let ee = match webpki::EndEntityCert::try_from(&leaf) {
            Ok(ee) => ee,
            Err(e) => return Some(format!("the certificate cannot be checked: {e}")),
        };
        let inter: Vec<CertificateDer> = others
            .iter()
            .map(|c| CertificateDer::from(c.as_slice()))
            .collect();
        match ee.verify_for_usage(
            webpki::ALL_VERIFICATION_ALGS,
            &anchors,
            &inter,
            UnixTime::now(),
            // As `openssl verify -purpose codesigning`: a certificate that
            // lists key purposes must list code signing (roots list none).
            webpki::KeyUsage::required_if_present(CODE_SIGNING),
            None,
            None,
        ) {
            Ok(_) => None,
            Err(webpki::Error::UnknownIssuer) => Some("its issuer is not a trusted root".into()),
            Err(webpki::Error::CertExpired { .. }) => Some("the certificate has expired".into()),
            Err(webpki::Error::RequiredEkuNotFoundContext(_)) => {
                Some("a certificate of the chain is not for code signing".into())
            }
            Err(e) => Some(format!("{e}")),
        }
    }
}

/// The length of the zip part of `f` and the signature's status.
pub(super) fn read(f: &mut File, roots: &TrustRoots) -> std::io::Result<(u64, SignatureStatus)> {
    let len = f.seek(SeekFrom::End(0))?;
    let foot = FOOTER.len() as u64;
    if len < foot {
        return Ok((len, SignatureStatus::Unsigned));
    }
    let mut end = vec![0u8; FOOTER.len()];
    f.seek(SeekFrom::Start(len - foot))?;
    f.read_exact(&mut end)?;
    if end != FOOTER {
        return Ok((len, SignatureStatus::Unsigned));
    }
    // The block is at most MAX_SIGNATURE plus its markers: read that tail only.
    let tail_len = len.min(MAX_SIGNATURE + (HEADER.len() + 4 + FOOTER.len()) as u64);
    let tail_start = len - tail_len;
    let mut tail = vec![0u8; tail_len as usize];
    f.seek(SeekFrom::Start(tail_start))?;
    f.read_exact(&mut tail)?;
    let body_end = tail.len() - FOOTER.len();
    let Some(h) = tail[..body_end]
        .windows(HEADER.len())
        .rposition(|w| w == HEADER)
    else {
        return Ok((
            len,
            invalid("the file ends with MCPB_SIG_END but has no MCPB_SIG_V1 before it"),
        ));
    };
    let zip_len = tail_start + h as u64;
    let der_start = h + HEADER.len() + 4;
    if der_start > body_end {
        return Ok((zip_len, invalid("the signature block is cut short")));
    }
    let mut n = [0u8; 4];
    n.copy_from_slice(&tail[h + HEADER.len()..der_start]);
    let der = &tail[der_start..body_end];
    if u32::from_le_bytes(n) as usize != der.len() {
        return Ok((
            zip_len,
            invalid("the signature block's length does not match its content"),
        ));
    }
    let digest = sha256_of(f, zip_len)?;
    Ok((zip_len, verify(der, &digest, roots)))
}

fn invalid(reason: impl Into<String>) -> SignatureStatus {
    SignatureStatus::Invalid {
        reason: reason.into(),
    }
}

fn sha256_of(f: &mut File, len: u64) -> std::io::Result<Vec<u8>> {
    f.seek(SeekFrom::Start(0))?;
    let mut hasher = Sha256::new();
    let mut left = len;
    let mut buf = vec![0u8; 64 * 1024];
    while left > 0 {
        let want = (buf.len() as u64).min(left) as usize;
        f.read_exact(&mut buf[..want])?;
        hasher.update(&buf[..want]);
        left -= want as u64;
    }
    Ok(hasher.finalize().to_vec())
}

/// Checks the detached SignedData `der` over content whose SHA-256 is `digest`.
fn verify(der: &[u8], digest: &[u8], roots: &TrustRoots) -> SignatureStatus {
    match check(der, digest, roots) {
        Ok(status) => status,
        Err(reason) => invalid(reason),
    }
}

fn check(der: &[u8], digest: &[u8], roots: &TrustRoots) -> Result<SignatureStatus, String> {
    let info = ContentInfo::from_der(der).map_err(|e| format!("not a PKCS#7 block: {e}"))?;
    if info.content_type != ID_SIGNED_DATA {
        return Err(format!(
            "PKCS#7 content {} is not signed data",
            info.content_type
        ));
    }
    let signed: SignedData = info
        .content
        .decode_as()
        .map_err(|e| format!("unreadable signed data: {e}"))?;
    let certs: Vec<&Certificate> = signed
        .certificates
        .as_ref()
        .map(|set| {
            set.0
                .iter()
                .filter_map(|c| match c {
                    CertificateChoices::Certificate(c) => Some(c),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    let signer = match signed.signer_infos.0.as_slice() {
        [one] => one,
        [] => return Err("no signer".into()),
        _ => return Err("more than one signer".into()),
    };
    let cert = match &signer.sid {
        SignerIdentifier::IssuerAndSerialNumber(id) => certs
            .iter()
            .find(|c| {
                c.tbs_certificate.issuer == id.issuer
                    && c.tbs_certificate.serial_number == id.serial_number
            })
            .copied(),
        SignerIdentifier::SubjectKeyIdentifier(_) => certs.first().copied(),
    }
    .ok_or("the signer's certificate is not in the signature")?;
    if signer.digest_alg.oid != ID_SHA256 {
        return Err(format!(
            "digest algorithm {} is not SHA-256",
            signer.digest_alg.oid
        ));
    }
    let attrs = signer
        .signed_attrs
        .as_ref()
        .ok_or("the signature has no signed attributes")?;
    let signed_digest = attrs
        .iter()
        .find(|a| a.oid == ID_MESSAGE_DIGEST)
        .and_then(|a| a.values.iter().next())
        .ok_or("the signature has no message digest")?;
    if signed_digest.tag() != Tag::OctetString || signed_digest.value() != digest {
        return Err(
            "the content does not match it: the file was changed after it was signed".into(),
        );
    }
    let alg = &signer.signature_algorithm.oid;
    if *alg != RSA_ENCRYPTION && *alg != SHA256_WITH_RSA {
        return Err(format!(
            "signature algorithm {alg} is not supported (RSA with SHA-256 only)"
        ));
    }
    let key = rsa_key(cert)?;
    let attrs_der = signed_attrs_as_signed(der, attrs)?;
    key.verify(
        Pkcs1v15Sign::new::<Sha256>(),
        &Sha256::digest(&attrs_der),
        signer.signature.as_bytes(),
    )
    .map_err(|_| "the signature does not match the signer's key".to_string())?;

    let tbs = &cert.tbs_certificate;
    let subject = common_name(&tbs.subject);
    let issuer = common_name(&tbs.issuer);
    let fingerprint = hex::encode(Sha256::digest(
        cert.to_der().map_err(|e| format!("certificate: {e}"))?,
    ));
    if tbs.subject == tbs.issuer && signed_itself(cert, &key) {
        return Ok(SignatureStatus::SelfSigned {
            subject,
            fingerprint,
        });
    }
    let leaf = cert.to_der().map_err(|e| format!("certificate: {e}"))?;
    let others: Vec<Vec<u8>> = certs
        .iter()
        .filter(|c| !std::ptr::eq(**c, cert))
        .filter_map(|c| c.to_der().ok())
        .collect();
    let untrusted = roots.why_untrusted(&leaf, &others);
    Ok(SignatureStatus::Signed {
        subject,
        issuer,
        fingerprint,
        trusted: untrusted.is_none(),
        untrusted,
    })
}

/// The signed attributes as the signer encoded them: a DER SET OF in the
/// order they appear in the block (`der` sorts a SET OF when it encodes one,
/// and signers such as node-forge do not, so re-encoding would change the
/// signed bytes). Each attribute is found in the block by its own encoding.
fn signed_attrs_as_signed(
    block: &[u8],
    attrs: &cms::signed_data::SignedAttributes,
) -> Result<Vec<u8>, String> {
    let mut parts = vec![];
    for a in attrs.iter() {
        let enc = a.to_der().map_err(|e| format!("signed attributes: {e}"))?;
        let at = memchr::memmem::find(block, &enc).ok_or("signed attributes are not in DER")?;
        parts.push((at, enc));
    }
    parts.sort_by_key(|(at, _)| *at);
    let body: Vec<u8> = parts.into_iter().flat_map(|(_, enc)| enc).collect();
    let mut out = vec![0x31];
    match body.len() {
        n if n < 0x80 => out.push(n as u8),
        n if n <= 0xff => out.extend([0x81, n as u8]),
        n if n <= 0xffff => out.extend([0x82, (n >> 8) as u8, n as u8]),
        _ => return Err("signed attributes are too long".into()),
    }
    out.extend(body);
    Ok(out)
}

/// Whether `cert` is signed by its own key (a self-signed certificate).
fn signed_itself(cert: &Certificate, key: &RsaPublicKey) -> bool {
    let Ok(tbs) = cert.tbs_certificate.to_der() else {
        return false;
    };
    let Some(sig) = cert.signature.as_bytes() else {
        return false;
    };
    cert.signature_algorithm.oid == SHA256_WITH_RSA
        && key
            .verify(Pkcs1v15Sign::new::<Sha256>(), &Sha256::digest(&tbs), sig)
            .is_ok()
}

fn rsa_key(cert: &Certificate) -> Result<RsaPublicKey, String> {
    let spki = &cert.tbs_certificate.subject_public_key_info;
    if spki.algorithm.oid != RSA_ENCRYPTION {
        return Err(format!(
            "the signer's key ({}) is not RSA, the only kind checked",
            spki.algorithm.oid
        ));
    }
    let der = spki.to_der().map_err(|e| format!("public key: {e}"))?;
    RsaPublicKey::from_public_key_der(&der).map_err(|e| format!("public key: {e}"))
}

/// The certificate name's CN, or the whole name when it has none.
fn common_name(name: &x509_cert::name::Name) -> String {
    const CN: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.4.3");
    for rdn in name.0.iter() {
        for atv in rdn.0.iter() {
            if atv.oid == CN {
                if let Ok(s) = std::str::from_utf8(atv.value.value()) {
                    return s.to_string();
                }
            }
        }
    }
    name.to_string()
}
