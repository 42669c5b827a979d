// common/auth and common/grpc_credentials without a server: token files
// (validation, permissions, generation), the constant-time comparison, the
// metadata check's three answers, and GrpcSecurity validation.
#include "common/auth.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <string>

#include "absl/strings/str_cat.h"
#include "common/grpc_credentials.h"
#include "tests/testing/test_pki.h"

namespace ringside {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string TmpPath(const std::string& name) {
  return absl::StrCat(std::getenv("TEST_TMPDIR"), "/", name);
}

std::string WriteFile(const std::string& name, const std::string& content,
                      mode_t mode = 0600) {
  const std::string path = TmpPath(name);
  std::ofstream(path, std::ios::binary | std::ios::trunc) << content;
  chmod(path.c_str(), mode);
  return path;
}

TEST(AuthTokenTest, LoadStripsTheFinalNewline) {
  std::string warning = "stale";
  absl::StatusOr<std::string> token =
      LoadAuthToken(WriteFile("t1", "s3cret-Token_1\n"), &warning);
  ASSERT_TRUE(token.ok()) << token.status();
  EXPECT_EQ(*token, "s3cret-Token_1");
  EXPECT_EQ(warning, "");
}

TEST(AuthTokenTest, BadFilesAreRefusedWithoutShowingTheContent) {
  struct Case {
    std::string content;
    std::string message;
  };
  for (const Case& c : {Case{"", "empty or holds only whitespace"},
                        Case{" \n\t\n", "empty or holds only whitespace"},
                        Case{"two words", "space, control or non-ASCII"},
                        Case{"caf\xc3\xa9", "space, control or non-ASCII"},
                        Case{std::string(kMaxAuthTokenBytes + 1, 'x'),
                             "at most 4096"}}) {
    const std::string path = WriteFile("bad", c.content);
    absl::StatusOr<std::string> token = LoadAuthToken(path);
    ASSERT_FALSE(token.ok()) << c.content;
    EXPECT_EQ(token.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(token.status().message(), HasSubstr(c.message));
    EXPECT_THAT(token.status().message(), HasSubstr(path));
    if (!c.content.empty() && c.content[0] != ' ') {
      EXPECT_THAT(std::string(token.status().message()),
                  Not(HasSubstr(c.content.substr(0, 5))));
    }
  }
  absl::StatusOr<std::string> missing = LoadAuthToken(TmpPath("nope"));
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(missing.status().message(), HasSubstr("nope"));
}

TEST(AuthTokenTest, WarnsWhenOthersMayReadTheFile) {
  std::string warning;
  ASSERT_TRUE(LoadAuthToken(WriteFile("open", "tok\n", 0644), &warning).ok());
  EXPECT_THAT(warning, HasSubstr("mode 644"));
  EXPECT_THAT(warning, HasSubstr("chmod 600"));
}

TEST(AuthTokenTest, GeneratedTokensAreFreshAndWrittenPrivately) {
  absl::StatusOr<std::string> a = GenerateAuthToken();
  absl::StatusOr<std::string> b = GenerateAuthToken();
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->size(), 64u);
  EXPECT_NE(*a, *b);
  EXPECT_TRUE(ValidateAuthToken(*a).ok());
  const std::string path = TmpPath("generated");
  std::remove(path.c_str());
  ASSERT_TRUE(WriteAuthTokenFile(path, *a).ok());
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(*LoadAuthToken(path), *a);
  // Never overwrites.
  EXPECT_EQ(WriteAuthTokenFile(path, *b).code(),
            absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(*LoadAuthToken(path), *a);
}

TEST(AuthTokenTest, ConstantTimeEquals) {
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_FALSE(ConstantTimeEquals("abd", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("ab", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abcd", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("abc", ""));
  // A prefix padded with NULs is still different.
  EXPECT_FALSE(ConstantTimeEquals(std::string("ab\0", 3), "ab"));
}

TEST(AuthTokenTest, MetadataCheckAnswers) {
  using Metadata = std::multimap<grpc::string_ref, grpc::string_ref>;
  const std::string right = AuthMetadataValue("tok-1");
  const std::string wrong = AuthMetadataValue("tok-2");
  EXPECT_TRUE(CheckAuthMetadata(Metadata{}, "").ok());
  EXPECT_TRUE(
      CheckAuthMetadata(Metadata{{kAuthMetadataKey, right}}, "tok-1").ok());

  const grpc::Status missing = CheckAuthMetadata(Metadata{}, "tok-1");
  EXPECT_EQ(missing.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(missing.error_message(), HasSubstr("missing auth token"));

  const grpc::Status bad = CheckAuthMetadata(
      Metadata{{kAuthMetadataKey, grpc::string_ref("tok-1")}}, "tok-1");
  EXPECT_EQ(bad.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(bad.error_message(), HasSubstr("malformed"));

  const grpc::Status differs =
      CheckAuthMetadata(Metadata{{kAuthMetadataKey, wrong}}, "tok-1");
  EXPECT_EQ(differs.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(differs.error_message(), HasSubstr("wrong auth token"));
  EXPECT_THAT(differs.error_message(), Not(HasSubstr("tok-")));
}

TEST(GrpcSecurityTest, ValidatesTlsMaterial) {
  absl::StatusOr<TestPki> pki = MakeTestPki(TmpPath("pki"));
  ASSERT_TRUE(pki.ok()) << pki.status();

  absl::StatusOr<GrpcSecurity> full = LoadGrpcSecurity(pki->Files(pki->ca_cert));
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_TRUE(full->tls);
  EXPECT_EQ(full->Describe(), "mTLS");
  EXPECT_TRUE(MakeServerCredentials(*full).ok());

  GrpcSecurityFiles ca_only;
  ca_only.tls_ca = pki->ca_cert;
  absl::StatusOr<GrpcSecurity> client = LoadGrpcSecurity(ca_only);
  ASSERT_TRUE(client.ok()) << client.status();
  EXPECT_EQ(client->Describe(), "TLS");
  // A client may verify with the CA alone; a server needs its certificate.
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> server =
      MakeServerCredentials(*client);
  EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(server.status().message(), HasSubstr("--tls_cert and --tls_key"));

  GrpcSecurityFiles no_key = pki->Files("");
  no_key.tls_key.clear();
  EXPECT_THAT(LoadGrpcSecurity(no_key).status().message(),
              HasSubstr("--tls_cert given without --tls_key"));

  GrpcSecurityFiles swapped = pki->Files("");
  std::swap(swapped.tls_cert, swapped.tls_key);
  EXPECT_THAT(LoadGrpcSecurity(swapped).status().message(),
              HasSubstr("--tls_cert holds no CERTIFICATE"));

  GrpcSecurityFiles not_pem = pki->Files(WriteFile("junk.pem", "junk"));
  EXPECT_THAT(LoadGrpcSecurity(not_pem).status().message(),
              HasSubstr("--tls_ca is not PEM"));

  GrpcSecurityFiles missing = pki->Files(TmpPath("absent.pem"));
  EXPECT_EQ(LoadGrpcSecurity(missing).status().code(),
            absl::StatusCode::kNotFound);

  GrpcSecurityFiles token;
  token.auth_token_file = WriteFile("tok", "abc\n");
  absl::StatusOr<GrpcSecurity> token_only = LoadGrpcSecurity(token);
  ASSERT_TRUE(token_only.ok());
  EXPECT_EQ(token_only->Describe(), "token");
  EXPECT_FALSE(token_only->tls);
}

}  // namespace
}  // namespace ringside
