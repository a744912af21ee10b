#include "exporter/http/request_head.h"

#include <gtest/gtest.h>

#include <string>

namespace roceqos {
namespace {

constexpr size_t kMax = 8192;

HeadParse Parse(std::string_view text) { return ParseRequestHead(text, kMax, kMax); }

TEST(ParseRequestHead, ACompleteGetWithQueryAndAcceptEncoding) {
  const std::string text =
      "GET /metrics?collect%5B%5D=x HTTP/1.1\r\nHost: x\r\naccept-encoding:  gzip \r\n\r\nrest";
  const HeadParse p = Parse(text);
  ASSERT_EQ(p.kind, HeadParse::Kind::kComplete) << p.why;
  EXPECT_EQ(p.head.method, "GET");
  EXPECT_EQ(p.head.path, "/metrics");
  EXPECT_EQ(p.head.query, "collect%5B%5D=x") << "the query stays encoded for its own parser";
  EXPECT_EQ(p.head.accept_encoding, "gzip");
  EXPECT_EQ(p.head.head_bytes, text.size() - 4);
  EXPECT_EQ(p.head.content_length, 0u);
}

TEST(ParseRequestHead, IncompleteUntilTheBlankLine) {
  EXPECT_EQ(Parse("").kind, HeadParse::Kind::kIncomplete);
  EXPECT_EQ(Parse("GET /metrics HTTP/1.1\r\nHost: x\r\n").kind, HeadParse::Kind::kIncomplete);
  EXPECT_EQ(Parse("GET /metr").kind, HeadParse::Kind::kIncomplete);
  EXPECT_EQ(Parse("GET /metrics HTTP/1.0\n\n").kind, HeadParse::Kind::kComplete) << "bare LF";
  EXPECT_EQ(Parse("\r\nGET / HTTP/1.0\r\n\r\n").kind, HeadParse::Kind::kComplete)
      << "an empty line before the request line is ignored (RFC 9112 §2.2)";
}

TEST(ParseRequestHead, DecodesThePathAndRefusesBadEscapes) {
  EXPECT_EQ(Parse("GET /a%20b%2f HTTP/1.1\r\n\r\n").head.path, "/a b/");
  for (const char* bad : {"GET /a%2 HTTP/1.1\r\n\r\n", "GET /a%zz HTTP/1.1\r\n\r\n",
                          "GET /a%00 HTTP/1.1\r\n\r\n", "GET /a% HTTP/1.1\r\n\r\n"}) {
    const HeadParse p = Parse(bad);
    EXPECT_EQ(p.kind, HeadParse::Kind::kRefused) << bad;
    EXPECT_EQ(p.status, 400) << bad;
  }
}

TEST(ParseRequestHead, ContentLengthAndItsLimit) {
  EXPECT_EQ(Parse("POST /-/reload HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc").head.content_length,
            3u);
  EXPECT_EQ(ParseRequestHead("POST / HTTP/1.1\r\nContent-Length: 65\r\n\r\n", kMax, 64).status,
            413);
  EXPECT_EQ(Parse("POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 4\r\n\r\n").status, 400);
  EXPECT_EQ(Parse("POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n").status, 400);
  EXPECT_EQ(Parse("POST / HTTP/1.1\r\nContent-Length: 1 2\r\n\r\n").status, 400);
  EXPECT_EQ(Parse("POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n").status, 501);
}

TEST(ParseRequestHead, RefusesMalformedHeads) {
  struct Case {
    const char* text;
    int status;
  };
  for (const Case& c :
       {Case{"\x01\x02 garbage\r\n\r\n", 400}, Case{"GET /\r\n\r\n", 400},
        Case{"GET  / HTTP/1.1\r\n\r\n", 400}, Case{"GET / HTTP/1.1 x\r\n\r\n", 400},
        Case{"GET http://h/ HTTP/1.1\r\n\r\n", 400}, Case{"GET * HTTP/1.1\r\n\r\n", 400},
        Case{"G(T / HTTP/1.1\r\n\r\n", 400}, Case{"GET / HTTP/2.0\r\n\r\n", 505},
        Case{"GET / HTTQ/1.1\r\n\r\n", 400}, Case{"GET / HTTP/1.1\r\nNo colon\r\n\r\n", 400},
        Case{"GET / HTTP/1.1\r\nName : v\r\n\r\n", 400},
        Case{"GET / HTTP/1.1\r\nA: b\r\n folded\r\n\r\n", 400},
        Case{"GET / HTTP/1.1\r\nA: b\x01\r\n\r\n", 400},
        Case{"GET / HTTP/1.1\rX: y\r\n\r\n", 400}}) {
    const HeadParse p = Parse(c.text);
    EXPECT_EQ(p.kind, HeadParse::Kind::kRefused) << c.text;
    EXPECT_EQ(p.status, c.status) << c.text;
    EXPECT_FALSE(p.why.empty());
  }
}

TEST(ParseRequestHead, AHeadPastTheLimitIsRefusedBeforeItEnds) {
  const std::string line = "GET /" + std::string(kMax, 'a');
  EXPECT_EQ(Parse(line).status, 414) << "no need to wait for the rest";
  const std::string header = "GET / HTTP/1.1\r\nX-Big: " + std::string(kMax, 'a');
  EXPECT_EQ(Parse(header).status, 431);
  const std::string exact = "GET / HTTP/1.1\r\nX: " + std::string(kMax - 23, 'a') + "\r\n\r\n";
  ASSERT_EQ(exact.size(), kMax);
  EXPECT_EQ(Parse(exact).kind, HeadParse::Kind::kComplete) << "the limit itself is allowed";
}

}  // namespace
}  // namespace roceqos
