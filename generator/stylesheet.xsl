<?xml version="1.0" encoding="UTF-8"?>
<!--
  rsgen's stylesheet: a browser that opens a ResourceSync document applies
  it and shows a table instead of raw XML. ResourceSync clients read the XML
  and ignore it. XSLT 1.0, the version browsers implement.
-->
<xsl:stylesheet version="1.0"
    xmlns:xsl="http://www.w3.org/1999/XSL/Transform"
    xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"
    xmlns:rs="http://www.openarchives.org/rs/terms/"
    exclude-result-prefixes="sm rs">

  <xsl:output method="html" encoding="UTF-8" indent="yes" doctype-system="about:legacy-compat"/>

  <xsl:variable name="md" select="/*/rs:md"/>
  <xsl:variable name="entries" select="/*/sm:url | /*/sm:sitemap"/>
  <xsl:variable name="title">
    <xsl:call-template name="capability-name">
      <xsl:with-param name="capability" select="$md/@capability"/>
    </xsl:call-template>
    <xsl:if test="/sm:sitemapindex"> Index</xsl:if>
  </xsl:variable>

  <xsl:template match="/">
    <html lang="en">
      <head>
        <meta charset="utf-8"/>
        <meta name="viewport" content="width=device-width, initial-scale=1"/>
        <title><xsl:value-of select="$title"/></title>
        <style>
          body { font: 15px/1.45 system-ui, sans-serif; margin: 2em auto; max-width: 80em; padding: 0 1em; color: #1d2430; }
          h1 { font-size: 1.5em; margin-bottom: .2em; }
          .about { color: #556; margin-top: 0; }
          dl.md { display: grid; grid-template-columns: max-content auto; gap: .15em 1em; }
          dl.md dt { font-weight: 600; }
          dl.md dd { margin: 0; }
          table { border-collapse: collapse; width: 100%; margin-top: 1em; }
          th, td { text-align: left; padding: .3em .6em; border-bottom: 1px solid #dde; vertical-align: top; }
          th { background: #eef1f6; position: sticky; top: 0; }
          td.n { color: #889; text-align: right; }
          td.hash { font-family: ui-monospace, monospace; font-size: .85em; overflow-wrap: anywhere; }
          .created { color: #1a7f37; } .updated { color: #9a6700; } .deleted { color: #cf222e; }
          .open { color: #1a7f37; font-weight: 600; }
        </style>
      </head>
      <body>
        <h1><xsl:value-of select="$title"/></h1>
        <p class="about">A ResourceSync document (ANSI/NISO Z39.99-2017), shown by rsgen's stylesheet. Machines read the XML: view the page source.</p>
        <dl class="md">
          <xsl:for-each select="$md/@at | $md/@completed | $md/@from | $md/@until">
            <dt><xsl:value-of select="name()"/></dt>
            <dd><xsl:value-of select="."/></dd>
          </xsl:for-each>
          <xsl:if test="$md/@capability = 'changelist' or $md/@capability = 'changedump'">
            <dt>status</dt>
            <dd>
              <xsl:choose>
                <xsl:when test="$md/@until">closed: it will not change again</xsl:when>
                <xsl:otherwise><span class="open">open</span>: later builds add their changes to it</xsl:otherwise>
              </xsl:choose>
            </dd>
          </xsl:if>
          <xsl:for-each select="/*/rs:ln">
            <dt><xsl:value-of select="@rel"/></dt>
            <dd><a href="{@href}"><xsl:value-of select="@href"/></a></dd>
          </xsl:for-each>
          <dt>entries</dt>
          <dd id="count"><xsl:value-of select="count($entries)"/></dd>
        </dl>
        <table id="entries">
          <thead>
            <tr>
              <th>#</th>
              <th>location</th>
              <xsl:if test="$entries/sm:lastmod"><th>lastmod</th></xsl:if>
              <xsl:if test="$entries/rs:md/@capability"><th>capability</th></xsl:if>
              <xsl:if test="$entries/rs:md/@change"><th>change</th></xsl:if>
              <xsl:if test="$entries/rs:md/@datetime"><th>datetime</th></xsl:if>
              <xsl:if test="$entries/rs:md/@at"><th>at</th></xsl:if>
              <xsl:if test="$entries/rs:md/@from"><th>from</th></xsl:if>
              <xsl:if test="$entries/rs:md/@until"><th>until</th></xsl:if>
              <xsl:if test="$entries/rs:md/@length"><th>length</th></xsl:if>
              <xsl:if test="$entries/rs:md/@type"><th>type</th></xsl:if>
              <xsl:if test="$entries/rs:md/@hash"><th>hash</th></xsl:if>
            </tr>
          </thead>
          <tbody>
            <xsl:for-each select="$entries">
              <tr class="entry">
                <td class="n"><xsl:value-of select="position()"/></td>
                <td><a href="{sm:loc}"><xsl:value-of select="sm:loc"/></a></td>
                <xsl:if test="$entries/sm:lastmod"><td><xsl:value-of select="sm:lastmod"/></td></xsl:if>
                <xsl:if test="$entries/rs:md/@capability">
                  <td>
                    <xsl:call-template name="capability-name">
                      <xsl:with-param name="capability" select="rs:md/@capability"/>
                    </xsl:call-template>
                  </td>
                </xsl:if>
                <xsl:if test="$entries/rs:md/@change"><td class="{rs:md/@change}"><xsl:value-of select="rs:md/@change"/></td></xsl:if>
                <xsl:if test="$entries/rs:md/@datetime"><td><xsl:value-of select="rs:md/@datetime"/></td></xsl:if>
                <xsl:if test="$entries/rs:md/@at"><td><xsl:value-of select="rs:md/@at"/></td></xsl:if>
                <xsl:if test="$entries/rs:md/@from"><td><xsl:value-of select="rs:md/@from"/></td></xsl:if>
                <xsl:if test="$entries/rs:md/@until">
                  <td>
                    <xsl:choose>
                      <xsl:when test="rs:md/@until"><xsl:value-of select="rs:md/@until"/></xsl:when>
                      <xsl:when test="rs:md/@from"><span class="open">open</span></xsl:when>
                    </xsl:choose>
                  </td>
                </xsl:if>
                <xsl:if test="$entries/rs:md/@length"><td><xsl:value-of select="rs:md/@length"/></td></xsl:if>
                <xsl:if test="$entries/rs:md/@type"><td><xsl:value-of select="rs:md/@type"/></td></xsl:if>
                <xsl:if test="$entries/rs:md/@hash"><td class="hash"><xsl:value-of select="rs:md/@hash"/></td></xsl:if>
              </tr>
            </xsl:for-each>
          </tbody>
        </table>
      </body>
    </html>
  </xsl:template>

  <xsl:template name="capability-name">
    <xsl:param name="capability"/>
    <xsl:choose>
      <xsl:when test="$capability = 'description'">Source Description</xsl:when>
      <xsl:when test="$capability = 'capabilitylist'">Capability List</xsl:when>
      <xsl:when test="$capability = 'resourcelist'">Resource List</xsl:when>
      <xsl:when test="$capability = 'changelist'">Change List</xsl:when>
      <xsl:when test="$capability = 'resourcedump'">Resource Dump</xsl:when>
      <xsl:when test="$capability = 'changedump'">Change Dump</xsl:when>
      <xsl:when test="$capability = 'resourcedump-manifest'">Resource Dump Manifest</xsl:when>
      <xsl:when test="$capability = 'changedump-manifest'">Change Dump Manifest</xsl:when>
      <xsl:when test="$capability = 'resourcelist-archive'">Resource List Archive</xsl:when>
      <xsl:when test="$capability = 'resourcedump-archive'">Resource Dump Archive</xsl:when>
      <xsl:when test="$capability = 'changelist-archive'">Change List Archive</xsl:when>
      <xsl:when test="$capability = 'changedump-archive'">Change Dump Archive</xsl:when>
      <xsl:otherwise><xsl:value-of select="$capability"/></xsl:otherwise>
    </xsl:choose>
  </xsl:template>
</xsl:stylesheet>
