//! Archive-level behaviour of the npz reader and writer: keys, lookup, raw
//! members, CRC and corruption errors, alignment, atomic files.
#![cfg(feature = "npz")]

use npy_mmap::ErrorKind;
use std::io::{Cursor, Read};

use npy_mmap::AtomicFile;
use npy_mmap::npz::{Compression, MemberCompression, NpzArchive, NpzWriter};

fn archive_with(members: &[(&str, &[u8])], compression: Compression) -> Vec<u8> {
    let mut writer = NpzWriter::new(Cursor::new(Vec::new())).unwrap();
    writer.set_compression(compression).unwrap();
    for (name, content) in members {
        writer.add_raw_member(name, content).unwrap();
    }
    writer.into_inner().unwrap().into_inner()
}

fn open(bytes: Vec<u8>) -> NpzArchive<Cursor<Vec<u8>>> {
    NpzArchive::new(Cursor::new(bytes)).unwrap()
}

#[test]
fn keys_strip_one_npy_suffix_in_zip_order() {
    let bytes = archive_with(
        &[
            ("b.npy", b"1"),
            ("a", b"2"),
            ("group/c.npy", b"3"),
            ("d.npy.npy", b"4"),
            ("é.npy", b"5"),
        ],
        Compression::Stored,
    );
    let archive = open(bytes);
    assert_eq!(archive.keys(), ["b", "a", "group/c", "d.npy", "é"]);
    assert_eq!(
        archive.member_names(),
        ["b.npy", "a", "group/c.npy", "d.npy.npy", "é.npy"]
    );
    assert_eq!(archive.len(), 5);
}

#[test]
fn lookup_accepts_key_and_full_name() {
    let bytes = archive_with(
        &[
            ("x.npy", b"xx"),
            ("group/y.npy", b"yy"),
            ("d.npy.npy", b"dd"),
        ],
        Compression::Stored,
    );
    let mut archive = open(bytes);
    for key in ["x", "x.npy"] {
        assert!(archive.contains(key));
        assert_eq!(archive.read_raw(key).unwrap(), b"xx");
    }
    assert_eq!(archive.read_raw("group/y").unwrap(), b"yy");
    assert_eq!(archive.read_raw("d.npy").unwrap(), b"dd");
    assert!(!archive.contains("y"));
    assert!(!archive.contains("x.npy.npy"));
}

#[test]
fn raw_name_wins_over_key_like_numpy() {
    // NumPy looks the full name up first: "a" is the member "a", not "a.npy".
    let bytes = archive_with(&[("a.npy", b"npy"), ("a", b"raw")], Compression::Stored);
    let mut archive = open(bytes);
    assert_eq!(archive.keys(), ["a", "a"]);
    assert_eq!(archive.read_raw("a").unwrap(), b"raw");
    assert_eq!(archive.read_raw("a.npy").unwrap(), b"npy");
}

#[test]
fn missing_key_uses_numpys_message() {
    let mut archive = open(archive_with(&[("x.npy", b"1")], Compression::Stored));
    let error = archive.read_raw("nope").unwrap_err();
    assert!(matches!(
        error.kind(),
        ErrorKind::Archive(npy_core::npz::ArchiveError::NotAFile { .. })
    ));
    assert_eq!(error.to_string(), "nope is not a file in the archive");
    for error in [
        archive.info("nope").unwrap_err(),
        archive.header("nope").unwrap_err(),
    ] {
        assert!(
            matches!(
                error.kind(),
                ErrorKind::Archive(npy_core::npz::ArchiveError::NotAFile { .. })
            ),
            "{error:?}"
        );
        assert_eq!(error.to_string(), "nope is not a file in the archive");
    }
}

#[test]
fn info_reports_the_central_directory() {
    let content = vec![7u8; 1000];
    let mut archive = open(archive_with(
        &[("s.npy", &content)],
        Compression::Deflated { level: 9 },
    ));
    let info = archive.info("s").unwrap();
    assert_eq!(info.name, "s.npy");
    assert_eq!(info.key, "s");
    assert_eq!(info.compression, MemberCompression::Deflated);
    assert_eq!(info.size, 1000);
    assert!(info.compressed_size < 100, "{info:?}");
    assert_eq!(info.crc32, crc32fast::hash(&content));
    assert_eq!(archive.read_raw("s").unwrap(), content);

    let stored = open(archive_with(&[("s.npy", &content)], Compression::Stored));
    let info = stored.info("s.npy").unwrap();
    assert_eq!(info.compression, MemberCompression::Stored);
    assert_eq!(info.compressed_size, 1000);
}

#[test]
fn non_npy_members_are_not_arrays() {
    let mut archive = open(archive_with(
        &[("metadata", b"some text"), ("tiny", b"\x93N")],
        Compression::Stored,
    ));
    assert!(!archive.is_npy("metadata").unwrap());
    assert!(!archive.is_npy("tiny").unwrap());
    let error = archive.header("metadata").unwrap_err();
    assert!(matches!(error.kind(), ErrorKind::NotNpy), "{error}");
    assert!(error.to_string().contains("'metadata'"), "{error}");
}

fn corrupt_first_byte_of(bytes: &mut [u8], content: &[u8]) {
    let at = bytes
        .windows(content.len())
        .position(|w| w == content)
        .expect("content stored verbatim");
    bytes[at] ^= 0xff;
}

#[test]
fn bad_crc_fails_that_member_only() {
    let mut bytes = archive_with(
        &[
            ("good.npy", b"intact member"),
            ("x.npy", b"member to damage"),
        ],
        Compression::Stored,
    );
    corrupt_first_byte_of(&mut bytes, b"member to damage");
    let mut archive = open(bytes);
    let error = archive.read_raw("x").unwrap_err();
    assert!(matches!(
        error.kind(),
        ErrorKind::Archive(npy_core::npz::ArchiveError::BadCrc { .. })
    ));
    assert_eq!(error.to_string(), "Bad CRC-32 for file 'x.npy'");
    assert_eq!(archive.read_raw("good").unwrap(), b"intact member");
}

#[test]
fn corrupt_deflate_stream_is_a_member_error() {
    let content: Vec<u8> = (0..4000u32).flat_map(|i| (i % 251).to_le_bytes()).collect();
    let mut bytes = archive_with(
        &[("z.npy", &content), ("ok", b"fine")],
        Compression::DEFLATED,
    );
    let info = open(bytes.clone()).info("z").unwrap();
    // Scribble over the middle of the compressed stream.
    let start = info.header_offset as usize + 30 + "z.npy".len() + 20 + 8;
    for byte in &mut bytes[start..start + 40] {
        *byte = 0xAA;
    }
    let mut archive = open(bytes);
    let error = archive.read_raw("z").unwrap_err();
    assert!(error.to_string().contains("'z.npy'"), "{error}");
    assert_eq!(archive.read_raw("ok").unwrap(), b"fine");
}

#[test]
fn truncated_archive_is_not_a_zip() {
    let bytes = archive_with(&[("x.npy", &[1u8; 300])], Compression::Stored);
    for cut in [0, 10, bytes.len() / 2, bytes.len() - 1] {
        let error = NpzArchive::new(Cursor::new(bytes[..cut].to_vec())).unwrap_err();
        assert!(
            matches!(
                error.kind(),
                ErrorKind::Archive(npy_core::npz::ArchiveError::NotAZip { .. })
            ),
            "cut {cut}: {error}"
        );
        assert!(error.to_string().starts_with("File is not a zip file"));
    }
}

#[test]
fn crc_recorded_in_central_directory_is_the_one_checked() {
    let bytes = archive_with(&[("x.npy", &[5u8; 256])], Compression::Stored);
    let mut lying = bytes;
    let cd = lying
        .windows(4)
        .position(|w| w == b"PK\x01\x02")
        .expect("central directory");
    lying[cd + 16] ^= 1;
    let mut archive = open(lying);
    assert!(matches!(
        (archive.read_raw("x").unwrap_err()).kind(),
        ErrorKind::Archive(npy_core::npz::ArchiveError::BadCrc { .. })
    ));
}

#[test]
fn empty_archive_has_no_keys() {
    let bytes = NpzWriter::new(Cursor::new(Vec::new()))
        .unwrap()
        .into_inner()
        .unwrap()
        .into_inner();
    assert_eq!(bytes.len(), 22, "an empty zip is its end record");
    assert_eq!(&bytes[..4], b"PK\x05\x06");
    let archive = open(bytes);
    assert!(archive.is_empty());
    assert!(archive.keys().is_empty());
}

#[test]
fn stored_member_data_starts_64_byte_aligned() {
    let names = ["a.npy", "bb.npy", "group/ccc.npy", "é.npy", "e"];
    let contents: Vec<Vec<u8>> = (0..names.len())
        .map(|i| vec![i as u8; 13 * i + 1])
        .collect();
    let members: Vec<(&str, &[u8])> = names
        .iter()
        .zip(&contents)
        .map(|(n, c)| (*n, c.as_slice()))
        .collect();
    let bytes = archive_with(&members, Compression::Stored);
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes.clone())).unwrap();
    for (index, content) in contents.iter().enumerate() {
        let file = zip.by_index_raw(index).unwrap();
        let start = file.data_start().unwrap();
        assert_eq!(start % 64, 0, "{:?} starts at {start}", file.name());
        let len = file.compressed_size() as usize;
        assert_eq!(
            &bytes[start as usize..start as usize + len],
            content.as_slice()
        );
    }
}

#[test]
fn members_are_zip64_in_their_local_headers() {
    let bytes = archive_with(&[("x.npy", b"data")], Compression::Stored);
    // Local header sizes are 0xFFFFFFFF and a zip64 extra field (0x0001) follows the name.
    assert_eq!(&bytes[..4], b"PK\x03\x04");
    assert_eq!(&bytes[18..26], &[0xff; 8]);
    let name_len = u16::from_le_bytes([bytes[26], bytes[27]]) as usize;
    let extra = &bytes[30 + name_len..];
    assert_eq!(&extra[..2], &[0x01, 0x00]);
    let mut zip = zip::ZipArchive::new(Cursor::new(bytes)).unwrap();
    let mut content = Vec::new();
    zip.by_name("x.npy")
        .unwrap()
        .read_to_end(&mut content)
        .unwrap();
    assert_eq!(content, b"data");
}

#[test]
fn duplicate_names_are_refused() {
    let mut writer = NpzWriter::new(Cursor::new(Vec::new())).unwrap();
    writer.add_raw_member("x.npy", b"1").unwrap();
    let error = writer.add_raw_member("x.npy", b"2").unwrap_err();
    assert!(
        matches!(error.kind(), ErrorKind::DuplicateName { .. }),
        "{error}"
    );
    // The archive is still fine with the first member.
    let mut archive = open(writer.into_inner().unwrap().into_inner());
    assert_eq!(archive.read_raw("x").unwrap(), b"1");
}

#[test]
fn positional_keys_count_up_and_clash_like_numpy() {
    let mut writer = NpzWriter::new(Cursor::new(Vec::new())).unwrap();
    assert_eq!(writer.next_positional_key().unwrap(), "arr_0");
    writer.add_raw_member("arr_1.npy", b"keyword").unwrap();
    let error = writer.next_positional_key().unwrap_err();
    assert_eq!(
        error.to_string(),
        "Cannot use un-named variables and keyword arr_1"
    );
}

#[test]
fn deflate_level_out_of_range_is_refused() {
    let mut writer = NpzWriter::new(Cursor::new(Vec::new())).unwrap();
    let error = writer
        .set_compression(Compression::Deflated { level: 10 })
        .unwrap_err();
    assert!(error.to_string().contains("level 10"), "{error}");
    assert_eq!(writer.compression(), Compression::Stored, "unchanged");
}

#[test]
fn members_of_one_archive_may_differ_in_compression() {
    let mut writer = NpzWriter::new(Cursor::new(Vec::new())).unwrap();
    writer.add("big", &vec![1.5f64; 1000]).unwrap();
    writer.set_compression(Compression::DEFLATED).unwrap();
    writer.add("small", &vec![7u8; 1000]).unwrap();
    let bytes = writer.into_inner().unwrap().into_inner();
    let mut archive = NpzArchive::from_bytes(&bytes).unwrap();
    assert_eq!(
        archive.info("big").unwrap().compression,
        MemberCompression::Stored
    );
    assert_eq!(
        archive.info("small").unwrap().compression,
        MemberCompression::Deflated
    );
    assert_eq!(
        archive.view::<f64>("big").unwrap().to_vec(),
        vec![1.5; 1000]
    );
    assert_eq!(archive.load("small").unwrap().bytes(), vec![7u8; 1000]);
}

fn dir_entries(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn temp_dir(tag: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("npz-test-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn uncommitted_file_leaves_nothing_behind() {
    let dir = temp_dir("uncommitted");
    let dest = dir.join("out.npz");
    {
        let mut writer = NpzWriter::create(&dest).unwrap();
        writer.add_raw_member("x", b"1").unwrap();
        assert_eq!(dir_entries(&dir).len(), 1, "only the temporary file");
        assert!(!dest.exists());
    }
    assert!(dir_entries(&dir).is_empty());
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn commit_replaces_the_destination_without_touching_open_readers() {
    let dir = temp_dir("commit");
    let dest = dir.join("out.npz");
    let mut writer = NpzWriter::create(&dest).unwrap();
    writer.add_raw_member("x", b"old").unwrap();
    writer.finish().unwrap();
    assert_eq!(dir_entries(&dir), ["out.npz"]);

    // A reader holding the old archive keeps reading the old bytes.
    let mut old = npy_mmap::OpenOptions::new().open_npz(&dest).unwrap();
    let mut writer = NpzWriter::create(&dest).unwrap();
    writer.add_raw_member("x", b"new content").unwrap();
    writer.finish().unwrap();
    assert_eq!(old.read_raw("x").unwrap(), b"old");
    assert_eq!(
        npy_mmap::OpenOptions::new()
            .open_npz(&dest)
            .unwrap()
            .read_raw("x")
            .unwrap(),
        b"new content"
    );
    assert_eq!(dir_entries(&dir), ["out.npz"]);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn atomic_file_paths() {
    let dir = temp_dir("atomic");
    let file = AtomicFile::create(dir.join("a.npz")).unwrap();
    assert_eq!(file.dest_path(), dir.join("a.npz"));
    assert_eq!(file.temp_path().parent(), Some(dir.as_path()));
    assert!(file.temp_path().exists());
    drop(file);
    assert!(!dir.join("a.npz").exists());
    let error = AtomicFile::create(dir.join("..")).unwrap_err();
    assert!(
        error.to_string().contains("does not name a file"),
        "{error}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn stored_member_is_borrowed_from_the_archive_bytes() {
    let content: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
    let bytes = archive_with(
        &[("first.npy", b"x"), ("m.npy", &content)],
        Compression::Stored,
    );
    let range = bytes.as_ptr_range();
    let mut archive = NpzArchive::from_bytes(&bytes).unwrap();
    let member = archive.stored_member("m").unwrap();
    assert_eq!(member, content.as_slice());
    assert!(
        range.contains(&member.as_ptr()),
        "zero-copy: inside the archive"
    );
    let offset = member.as_ptr() as usize - bytes.as_ptr() as usize;
    assert_eq!(offset % 64, 0);
    // The borrow outlives the archive value: it is tied to the bytes.
    drop(archive);
    assert_eq!(member[9_999], content[9_999]);
}

#[test]
fn compressed_member_cannot_be_borrowed() {
    let bytes = archive_with(&[("z.npy", &[1u8; 5000])], Compression::DEFLATED);
    let mut archive = NpzArchive::from_bytes(&bytes).unwrap();
    let error = archive.stored_member("z").unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::Archive(npy_core::npz::ArchiveError::Compressed { .. })
        ),
        "{error}"
    );
    let message = error.to_string();
    assert!(
        message.contains("'z.npy'") && message.contains("load"),
        "{message}"
    );
    assert!(matches!(
        (archive.array_bytes("z").unwrap_err()).kind(),
        ErrorKind::Archive(npy_core::npz::ArchiveError::Compressed { .. })
    ));
}

#[test]
fn stored_member_past_the_end_is_refused() {
    let mut bytes = archive_with(&[("m.npy", &[9u8; 100])], Compression::Stored);
    let cd = bytes
        .windows(4)
        .position(|w| w == b"PK\x01\x02")
        .expect("central directory");
    // Both sizes (compressed at +20, uncompressed at +24) claim 1 MB.
    bytes[cd + 20..cd + 24].copy_from_slice(&1_000_000u32.to_le_bytes());
    bytes[cd + 24..cd + 28].copy_from_slice(&1_000_000u32.to_le_bytes());
    // The entry would run into the central directory: the archive is
    // refused when it is opened, before any member is read.
    let error = NpzArchive::from_bytes(&bytes).unwrap_err();
    let message = error.to_string();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::Archive(npy_core::npz::ArchiveError::Corrupt { .. })
        ),
        "{error:?}"
    );
    assert!(
        message.contains("'m.npy'") && message.contains("past the start of the central directory"),
        "{message}"
    );
    let error = NpzArchive::new(Cursor::new(bytes.clone())).unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::Archive(npy_core::npz::ArchiveError::Corrupt { .. })
        ),
        "{error:?}"
    );
}

#[test]
fn non_npy_stored_member_has_no_array() {
    let bytes = archive_with(&[("notes", b"plain text")], Compression::Stored);
    let mut archive = NpzArchive::from_bytes(&bytes).unwrap();
    assert_eq!(archive.stored_member("notes").unwrap(), b"plain text");
    assert!(matches!(
        (archive.array_bytes("notes").unwrap_err()).kind(),
        ErrorKind::NotNpy
    ));
}

#[test]
fn unfinished_member_is_left_out_and_its_name_freed() {
    use std::io::Write;
    for compression in [Compression::Stored, Compression::DEFLATED] {
        let mut writer = NpzWriter::new(Cursor::new(Vec::new())).unwrap();
        writer.set_compression(compression).unwrap();
        writer.add_raw_member("before", b"kept").unwrap();
        {
            let mut member = writer.start_raw_member("x.npy").unwrap();
            member.write_all(&[0xEE; 5000]).unwrap();
            // Dropped without finish.
        }
        let mut member = writer.start_raw_member("x.npy").unwrap();
        assert_eq!(member.name(), "x.npy");
        member.write_all(b"second try").unwrap();
        member.finish().unwrap();
        let mut archive = open(writer.into_inner().unwrap().into_inner());
        assert_eq!(archive.keys(), ["before", "x"]);
        assert_eq!(archive.read_raw("x").unwrap(), b"second try");
        assert_eq!(archive.read_raw("before").unwrap(), b"kept");
    }
}

#[test]
fn streamed_raw_member_matches_its_content() {
    use std::io::Write;
    let content: Vec<u8> = (0..3_500_000u32).map(|i| (i % 97) as u8).collect();
    for compression in [Compression::Stored, Compression::Deflated { level: 1 }] {
        let mut writer = NpzWriter::new(Cursor::new(Vec::new())).unwrap();
        writer.set_compression(compression).unwrap();
        let mut member = writer.start_raw_member("big.bin").unwrap();
        for piece in content.chunks(777_777) {
            member.write_all(piece).unwrap();
        }
        member.finish().unwrap();
        let mut archive = open(writer.into_inner().unwrap().into_inner());
        assert!(archive.read_raw("big.bin").unwrap() == content);
    }
}

#[test]
fn member_reader_streams_and_checks_the_crc_at_the_end() {
    let content: Vec<u8> = (0..200_000u32).map(|i| (i % 13) as u8).collect();
    for compression in [Compression::Stored, Compression::DEFLATED] {
        let mut archive = open(archive_with(&[("m.npy", &content)], compression));
        let mut reader = archive.reader("m").unwrap();
        assert_eq!(reader.member(), "m.npy");
        let mut streamed = Vec::new();
        reader.read_to_end(&mut streamed).unwrap();
        assert!(streamed == content);
    }
    let mut bytes = archive_with(&[("m.npy", b"member to damage")], Compression::Stored);
    corrupt_first_byte_of(&mut bytes, b"member to damage");
    let mut archive = open(bytes);
    let error = archive
        .reader("m")
        .unwrap()
        .read_to_end(&mut Vec::new())
        .unwrap_err();
    assert_eq!(error.to_string(), "Bad CRC-32 for file 'm.npy'");
    let error = archive.reader("m").unwrap().verify().unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::Archive(npy_core::npz::ArchiveError::BadCrc { .. })
        ),
        "{error}"
    );
}

/// An `.npy` file of `values` as big-endian float64, whose header may claim
/// more elements than the data holds.
fn big_endian_npy(values: &[f64], claimed: usize) -> Vec<u8> {
    let header = npy_core::Header {
        dtype: npy_core::DType::parse(">f8").unwrap(),
        order: npy_core::Order::C,
        shape: vec![claimed],
    };
    let mut file = header.to_bytes(None).unwrap();
    for value in values {
        file.extend_from_slice(&value.to_be_bytes());
    }
    file
}

#[test]
fn members_load_alike_stored_or_deflated_and_converted_on_the_way() {
    let values: Vec<f64> = (0..100_000).map(|i| i as f64 * 0.25).collect();
    let member = big_endian_npy(&values, values.len());
    for compression in [Compression::Stored, Compression::DEFLATED] {
        let bytes = archive_with(&[("a.npy", &member)], compression);
        let options = npy_core::ReadOptions {
            to_native: true,
            ..Default::default()
        };
        let mut archive = npy_mmap::OpenOptions::from(options)
            .read_npz(Cursor::new(bytes))
            .unwrap();
        let array = archive.load("a").unwrap();
        assert_eq!(array.header().dtype.descr(), "<f8", "{compression:?}");
        assert_eq!(
            array.view::<f64>().unwrap().to_vec(),
            values,
            "{compression:?}"
        );
    }
}

#[test]
fn a_member_shorter_than_its_header_says_is_numpys_truncation_error() {
    let member = big_endian_npy(&[1.0, 2.0, 3.0], 10);
    for compression in [Compression::Stored, Compression::DEFLATED] {
        let mut archive = open(archive_with(&[("a.npy", &member)], compression));
        let error = archive.load("a").unwrap_err();
        let message = error.to_string();
        assert!(
            message.contains("a.npy")
                && message.contains(
                    "Failed to read all data for array. Expected (10,) = 10 elements, \
                     could only read 3 elements."
                ),
            "{compression:?}: {message}"
        );
    }
}

#[test]
fn an_npy_file_opened_as_an_archive_is_told_what_it_is() {
    let dir = std::env::temp_dir().join(format!("npy-mmap-npy-as-npz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("a.npy");
    npy_mmap::save(&path, &[1.0f64, 2.0][..]).unwrap();
    for error in [
        npy_mmap::OpenOptions::new().open_npz(&path).unwrap_err(),
        npy_mmap::npz::NpzArchive::new(std::io::Cursor::new(std::fs::read(&path).unwrap()))
            .unwrap_err(),
    ] {
        assert!(matches!(error.kind(), ErrorKind::IsNpy), "{error:?}");
        assert!(error.to_string().contains("not an .npz archive"), "{error}");
    }
    // Anything else keeps the zip reader's reason.
    std::fs::write(&path, b"neither a zip nor an npy file").unwrap();
    let error = npy_mmap::OpenOptions::new().open_npz(&path).unwrap_err();
    assert!(
        matches!(
            error.kind(),
            ErrorKind::Archive(npy_core::npz::ArchiveError::NotAZip { .. })
        ),
        "{error:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Round 4: a 70,000-character member name was an `OSError` with errno 0
/// from deep in the zip writer; now it is refused by name, before any
/// byte of the member is written, and nothing appears under the name.
#[test]
fn a_member_name_longer_than_a_zip_name_is_refused_up_front() {
    let dir = temp_dir("long-name");
    let path = dir.join("a.npz");
    let mut writer = NpzWriter::create(&path).unwrap();
    let key = "k".repeat(70_000);
    let error = writer.add(&key, &[1u8, 2, 3][..]).unwrap_err();
    assert!(
        error
            .to_string()
            .contains("a member name is at most 65535 bytes in a zip archive, not 70004"),
        "{error}"
    );
    writer.add("fine", &[1u8][..]).unwrap();
    writer.finish().unwrap();
    let mut archive = npy_mmap::OpenOptions::new().open_npz(&path).unwrap();
    assert_eq!(archive.keys(), ["fine"]);
    assert!(archive.load("fine").is_ok());
    std::fs::remove_dir_all(&dir).unwrap();
}
